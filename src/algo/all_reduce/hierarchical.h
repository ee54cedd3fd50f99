#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Needs evenNodes (algo/registry.h): L > 1 ranks on each of H > 1 nodes.
void hierarchicalAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op);

// The flat algorithm the all_reduce table chooses for the context's current
// group (a subgroup's size, as if on one node without a board), run on it:
// the phase across nodes. Defined with the table, in all_reduce.cc.
void flatAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);

}  // namespace comm::algo
