#pragma once

#include <cstddef>

#include "algo/blocks/pipeline.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The allGatherV contract of algo/collectives.h. Needs evenNodes
// (algo/selection/registry.h): L > 1 ranks on each of H > 1 nodes.
void hierarchicalAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                           const size_t* offsets);

// The flat algorithm for the context's current group (a subgroup's size, as
// if on one node without a board; COMM_ALGO's where it fits: chooseFlat,
// algo/selection/selection.h), run on it: each phase of the hierarchical one.
// Defined with the table, in all_gather.cc. `onFinal(offset, bytes)`, when
// given, hears of each piece of `out` that has its final value: as each
// arrives where the algorithm takes hooks (the ring), else every block at the
// end.
void flatAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   const ChunkFn& onFinal = {});

}  // namespace comm::algo
