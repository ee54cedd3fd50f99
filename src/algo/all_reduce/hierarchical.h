#pragma once

#include <cstddef>

#include "algo/all_reduce/ring.h"
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

// flatAllReduce with the ring's hooks (ring.h), over the blocks of
// ElementBlocks::even(count, size): block by block where the table picks
// the ring; under another algorithm every block's beforeReading, in the
// ring's order, comes before it runs and every onFinal after.
void flatAllReduceByBlocks(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op, const RingAllReduceHooks& hooks);

}  // namespace comm::algo
