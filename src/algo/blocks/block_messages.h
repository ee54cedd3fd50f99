// The messages of a V-collective's blocks (algo/patterns/blocks.h), given
// as bytes[r] bytes at offsets[r] per rank of the context: runs of adjacent
// blocks sent and received whole or in chunks, at their
// offsets or packed, and a rank's own block copied into place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "core/collective_context.h"

namespace comm::algo {

// Copy a rank's own block into place unless it is there already (in place),
// in pieces with the transport polled between them: messages streamed
// through shared memory move only while a rank polls, so one long memcpy
// would hold up the transfers it is meant to overlap (all_to_all of 1 MiB
// at 2 ranks: the 512 KiB local copy ran before the exchange moved).
inline void copyBlock(core::CollectiveContext& ctx, void* to, const void* from, size_t bytes) {
  constexpr size_t kPiece = size_t{64} << 10;
  if (bytes == 0 || to == from) return;
  for (size_t offset = 0;; offset += kPiece) {
    std::memcpy(static_cast<char*>(to) + offset, static_cast<const char*>(from) + offset,
                std::min(kPiece, bytes - offset));
    if (offset + kPiece >= bytes) return;
    ctx.poll();
  }
}

// One run as a message, in chunks over comm's TCP transport
// (algo/blocks/pipeline.h); the receives are added to `posted`. Every rank
// knows every run's size (the blocks are part of the collective's signature),
// so the chunks match.
inline void sendRun(core::CollectiveContext& ctx, int peer, uint32_t step, const char* data, size_t bytes) {
  sendChunks(ctx, peer, step, data, bytes, transferChunkBytes(ctx));
}

inline void recvRun(core::CollectiveContext& ctx, int peer, uint32_t step, char* data, size_t bytes,
                    std::vector<core::RequestId>& posted) {
  postReceiveChunks(ctx, peer, step, data, bytes, transferChunkBytes(ctx)).appendTo(posted);
}

// Post the runs of ranks first.. (count of them, modulo the size) of
// `buffer`, which holds the blocks at their offsets, as messages to / from
// `peer`; receives are added to `posted`.
inline void sendRuns(core::CollectiveContext& ctx, int peer, uint32_t step, const void* buffer, const size_t* bytes,
                     const size_t* offsets, int first, int count) {
  auto* base = static_cast<const char*>(buffer);
  Blocks::forEachRun(ctx.size(), bytes, offsets, first, count,
                     [&](Blocks::Run run) { sendRun(ctx, peer, step, base + run.offset, run.count); });
}

inline void recvRuns(core::CollectiveContext& ctx, int peer, uint32_t step, void* buffer, const size_t* bytes,
                     const size_t* offsets, int first, int count, std::vector<core::RequestId>& posted) {
  auto* base = static_cast<char*>(buffer);
  Blocks::forEachRun(ctx.size(), bytes, offsets, first, count,
                     [&](Blocks::Run run) { recvRun(ctx, peer, step, base + run.offset, run.count, posted); });
}

// The same messages as sendRuns/recvRuns, with the blocks packed back to back
// in `packed` (rank order from `first`) instead of at their offsets: what an
// inner node of a tree holds for its subtree.
inline void sendPacked(core::CollectiveContext& ctx, int peer, uint32_t step, const void* packed, const size_t* bytes,
                       const size_t* offsets, int first, int count) {
  size_t at = 0;
  Blocks::forEachRun(ctx.size(), bytes, offsets, first, count, [&](Blocks::Run run) {
    sendRun(ctx, peer, step, static_cast<const char*>(packed) + at, run.count);
    at += run.count;
  });
}

inline void recvPacked(core::CollectiveContext& ctx, int peer, uint32_t step, void* packed, const size_t* bytes,
                       const size_t* offsets, int first, int count, std::vector<core::RequestId>& posted) {
  size_t at = 0;
  Blocks::forEachRun(ctx.size(), bytes, offsets, first, count, [&](Blocks::Run run) {
    recvRun(ctx, peer, step, static_cast<char*>(packed) + at, run.count, posted);
    at += run.count;
  });
}

}  // namespace comm::algo
