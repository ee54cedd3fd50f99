// Chunked messages: a large message travels as a sequence of chunk messages
// of one step (they match in order), so that the receiver reduces chunk k
// while chunk k+1 is still on the wire, and can forward chunk k before the
// rest has arrived. Sender and receiver cut a message the same way, so each
// chunk message has the size its receive expects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;
using core::RequestId;

// Large enough that the per-message cost is small next to the transfer,
// small enough that a few MiB already make a pipeline of several stages. A
// multiple of every element size, so every chunk holds whole elements.
constexpr size_t kChunkBytes = size_t{256} << 10;

// Called with the byte offset and size of one chunk.
using ChunkFn = std::function<void(size_t offset, size_t bytes)>;

// Post `bytes` of `data` to `peer` as chunks of kChunkBytes under `step`.
std::vector<RequestId> sendChunks(CollectiveContext& ctx, int peer, uint32_t step, const void* data, size_t bytes);

// Post the receives matching sendChunks, without waiting.
std::vector<RequestId> postReceiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes);

// Receive like postReceiveChunks, then wait for the chunks in order and call
// `onChunk` for each as soon as it is in.
void receiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes,
                   const ChunkFn& onChunk);

void waitEach(CollectiveContext& ctx, const std::vector<RequestId>& ids);

}  // namespace comm::algo
