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
// small enough that comm's tcp sends a chunk (or two) without waiting for a
// go-ahead (transport/tcp/tcp_wire.h, kEagerBytes) and that a few MiB
// already make a pipeline of several stages. A multiple of every element
// size, so every chunk holds whole elements.
constexpr size_t kChunkBytes = size_t{256} << 10;
// Chunks in flight at once through the staging buffers.
constexpr size_t kStagingChunks = CollectiveContext::kStagingBytes / kChunkBytes;

// Called with the byte offset and size of one chunk.
using ChunkFn = std::function<void(size_t offset, size_t bytes)>;

// The ids of messages posted one after the other: a collective numbers its
// messages in posting order, so these need no list.
struct RequestRange {
  RequestId first = 0;
  size_t count = 0;
  RequestId operator[](size_t i) const { return first + i; }
  // Adds these ids to a list of ids to wait for.
  void appendTo(std::vector<RequestId>& ids) const {
    for (size_t i = 0; i < count; ++i) ids.push_back(first + i);
  }
};

// The chunk for messages that are only moved, not reduced: kChunkBytes where
// every peer's transport wants chunks (Transport::wantsChunkedMessages: the
// chunks pipeline through the sockets and every forward), whole messages
// elsewhere: through shared memory each extra message costs a ring
// handshake, more than it gains, and a transport that cuts large messages
// itself only pays for a second cut (docs/dev/algorithms-measurements.md has
// the figures). Every rank of a communicator uses the same transport
// (COMM_PROVIDER), so sender and receiver cut alike.
inline size_t transferChunkBytes(const CollectiveContext& ctx) {
  return ctx.chunkedMessages() ? kChunkBytes : SIZE_MAX;
}

// Post `bytes` of `data` to `peer` as chunks of `chunk` bytes under `step`,
// calling `beforeSending(offset, bytes)` just before each (so that each
// chunk can leave as soon as it is ready).
RequestRange sendChunks(CollectiveContext& ctx, int peer, uint32_t step, const void* data, size_t bytes,
                        size_t chunk = kChunkBytes, const ChunkFn& beforeSending = {});

// Post the receives matching sendChunks, without waiting.
RequestRange postReceiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes,
                               size_t chunk = kChunkBytes);

// Receive like postReceiveChunks, then wait for the chunks in order and call
// `onChunk` for each as soon as it is in.
void receiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes, const ChunkFn& onChunk,
                   size_t chunk = kChunkBytes);

// Waits for the chunks of `ids`, posted by postReceiveChunks with `chunk`
// for `bytes`, in order, calling `onChunk` as each is in.
void awaitChunks(CollectiveContext& ctx, RequestRange ids, size_t bytes, size_t chunk, const ChunkFn& onChunk);

// Called with the byte offset and size of one chunk and where its bytes are
// for the duration of the call.
using StagedChunkFn = std::function<void(size_t offset, size_t bytes, const char* staged)>;

// Receive like receiveChunks, but through a few chunk-sized staging buffers
// of the communicator instead of a landing area the size of the message:
// `onChunk` consumes each chunk (reduces it into its destination) before the
// buffer takes a later one. The staged bytes are read while still in cache,
// which saves the memory traffic of writing and rereading a landing area,
// and no call allocates one (a fresh mmap and its page faults once it passes
// glibc's mmap threshold).
void receiveStaged(CollectiveContext& ctx, int peer, uint32_t step, size_t bytes, const StagedChunkFn& onChunk);

void waitEach(CollectiveContext& ctx, const std::vector<RequestId>& ids);
void waitEach(CollectiveContext& ctx, RequestRange ids);

}  // namespace comm::algo
