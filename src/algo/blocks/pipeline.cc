#include "algo/blocks/pipeline.h"

#include <algorithm>

namespace comm::algo {

RequestRange sendChunks(CollectiveContext& ctx, int peer, uint32_t step, const void* data, size_t bytes, size_t chunk,
                        const ChunkFn& beforeSending) {
  RequestRange ids;
  auto* p = static_cast<const char*>(data);
  for (size_t offset = 0; offset < bytes; offset += std::min(chunk, bytes - offset)) {
    if (beforeSending) beforeSending(offset, std::min(chunk, bytes - offset));
    RequestId id = ctx.send(peer, step, p + offset, std::min(chunk, bytes - offset));
    if (ids.count++ == 0) ids.first = id;
  }
  return ids;
}

RequestRange postReceiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes,
                               size_t chunk) {
  RequestRange ids;
  auto* p = static_cast<char*>(data);
  for (size_t offset = 0; offset < bytes; offset += std::min(chunk, bytes - offset)) {
    RequestId id = ctx.recv(peer, step, p + offset, std::min(chunk, bytes - offset));
    if (ids.count++ == 0) ids.first = id;
  }
  return ids;
}

void awaitChunks(CollectiveContext& ctx, RequestRange ids, size_t bytes, size_t chunk, const ChunkFn& onChunk) {
  size_t offset = 0;
  for (size_t i = 0; i < ids.count; ++i) {
    ctx.wait(ids[i]);
    const size_t size = std::min(chunk, bytes - offset);
    onChunk(offset, size);
    offset += size;
  }
}

void receiveChunks(CollectiveContext& ctx, int peer, uint32_t step, void* data, size_t bytes, const ChunkFn& onChunk,
                   size_t chunk) {
  awaitChunks(ctx, postReceiveChunks(ctx, peer, step, data, bytes, chunk), bytes, chunk, onChunk);
}

void receiveStaged(CollectiveContext& ctx, int peer, uint32_t step, size_t bytes, const StagedChunkFn& onChunk) {
  const size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  char* staging = ctx.staging();
  auto chunkBytes = [&](size_t i) { return std::min(kChunkBytes, bytes - i * kChunkBytes); };
  auto bufferOf = [&](size_t i) { return staging + (i % kStagingChunks) * kChunkBytes; };
  RequestId inFlight[kStagingChunks];  // chunk i's receive, at i % kStagingChunks like its buffer
  auto post = [&](size_t i) { inFlight[i % kStagingChunks] = ctx.recv(peer, step, bufferOf(i), chunkBytes(i)); };
  for (size_t i = 0; i < std::min(chunks, kStagingChunks); ++i) post(i);
  for (size_t i = 0; i < chunks; ++i) {
    ctx.wait(inFlight[i % kStagingChunks]);
    onChunk(i * kChunkBytes, chunkBytes(i), bufferOf(i));
    if (i + kStagingChunks < chunks) post(i + kStagingChunks);
  }
}

void waitEach(CollectiveContext& ctx, const std::vector<RequestId>& ids) {
  for (RequestId id : ids) ctx.wait(id);
}

void waitEach(CollectiveContext& ctx, RequestRange ids) {
  for (size_t i = 0; i < ids.count; ++i) ctx.wait(ids[i]);
}

}  // namespace comm::algo
