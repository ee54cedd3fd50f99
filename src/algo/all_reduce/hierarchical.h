#pragma once

#include <cstddef>

#include "algo/all_reduce/ring.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Needs evenNodes (algo/selection/registry.h): L > 1 ranks on each of H > 1
// nodes.
void hierarchicalAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op);

// The flat algorithm for the context's current group (a subgroup's size, as
// if on one node without a board; COMM_ALGO's where it fits: chooseFlat,
// algo/selection/selection.h), run on it: the phase across nodes. An
// algorithm that takes hooks (the ring) calls them piece by piece as it goes;
// for the others beforeReading covers all of `in` before they start and
// onFinal all of `out` when they are done. Defined with the table, in
// all_reduce.cc.
void flatAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                   const RingAllReduceHooks& hooks = {});

}  // namespace comm::algo
