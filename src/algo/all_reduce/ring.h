#pragma once

#include <cstddef>

#include "algo/reduce_scatter/ring.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void ringAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);

// What a caller may learn of the ring all-reduce's progress, block by block:
// the blocks of ElementBlocks::even(count, size), one per rank.
struct RingAllReduceHooks {
  // Before `in`'s block is first read (RingReduceScatterOptions::beforeReading).
  BlockFn beforeReading;
  // Once the block of `out` holds its final result, which no step writes again.
  BlockFn onFinal;
};

// ringAllReduce with hooks: a hierarchical caller produces `in` and passes
// `out` on block by block while the ring's messages travel.
void ringAllReduceByBlocks(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op, const RingAllReduceHooks& hooks);

}  // namespace comm::algo
