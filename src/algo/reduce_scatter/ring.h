#pragma once

#include <cstdint>

#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Ring reduce-scatter of `in`, this rank's whole vector cut into `blocks`
// (one per rank, any sizes): on return `mine` (may be exactly in's block
// `rank`) holds op over every rank of block `rank`, and nothing of `in` is
// being read any more. `onChunk(offset, bytes)` is called for each piece of
// `mine` as soon as it is final, so a caller can pass it on at once.
// `beforeReading(offset, bytes)` is called once for each piece of `in` (a
// byte offset into it) just before that piece is first read, so a caller
// may fill `in` as the ring goes. Uses steps [stepBase, stepBase + size - 1).
void ringReduceScatter(CollectiveContext& ctx, const void* in, void* mine, const Blocks& blocks, comm_dtype_t dtype,
                       comm_op_t op, uint32_t stepBase, const ChunkFn& onChunk = {}, const ChunkFn& beforeReading = {});

}  // namespace comm::algo
