#pragma once

#include <cstdint>
#include <functional>

#include "algo/patterns/element_blocks.h"
#include "algo/pipeline.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Called with the index of one block.
using BlockFn = std::function<void(int block)>;

// What a caller may add to a ring reduce-scatter.
struct RingReduceScatterOptions {
  // Its steps are [stepBase, stepBase + size - 1).
  uint32_t stepBase = 0;
  // Called for each piece of `mine` (offset and bytes) as soon as it is
  // final, so the caller can pass it on at once.
  ChunkFn onChunk;
  // Called with each block's index before the first read of that block of
  // `in`, so that a caller can still be producing `in` while the first
  // blocks travel: block rank-1 first, then rank-2, ... and `rank` last.
  BlockFn beforeReading;
  // Where its forwarded partial sums land: another area when it runs
  // within the steps of a collective that holds kLanding.
  core::Scratch landing = core::Scratch::kLanding;
};

// Ring reduce-scatter of `in`, this rank's whole vector cut into `blocks`
// (one per rank, any sizes and offsets): on return `mine` (may be exactly
// in's block `rank`) holds op over every rank of block `rank`, and nothing
// of `in` is being read any more.
void ringReduceScatter(CollectiveContext& ctx, const void* in, void* mine, const ElementBlocks& blocks,
                       comm_dtype_t dtype, comm_op_t op, const RingReduceScatterOptions& options = {});

}  // namespace comm::algo
