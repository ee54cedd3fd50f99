#pragma once

#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// reduceScatterV's contract (the blocks back to back, one per rank). Needs
// evenNodes (algo/selection/registry.h): L > 1 ranks on each of H > 1 nodes.
void hierarchicalReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks,
                               comm_dtype_t dtype, comm_op_t op);

// The flat algorithm for the context's current group (a subgroup's size, as
// if on one node without a board; COMM_ALGO's where it fits: chooseFlat,
// algo/selection/selection.h), run on it: each phase of the hierarchical one.
// Defined with the table, in reduce_scatter.cc. `beforeReading(offset,
// bytes)`, when given, is called for each piece of `in` before it is first
// read (algo/reduce_scatter/ring.h) where the algorithm takes hooks (the
// ring), else once for the whole of `in`.
void flatReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype,
                       comm_op_t op, const ChunkFn& beforeReading = {});

}  // namespace comm::algo
