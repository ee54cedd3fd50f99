#include "algo/all_to_all/sized_block.h"

#include <fmt/format.h>

#include "algo/blocks/pipeline.h"

namespace comm::algo {
namespace {

// Whether a block of `bytes` goes in chunks.
bool inChunks(size_t bytes, bool chunked) { return chunked && bytes > kChunkBytes; }

// The first chunk of a chunked block: what is left over the kChunkBytes
// chunks that follow it, in (kChunkBytes, 2 kChunkBytes].
size_t firstChunkBytes(size_t bytes) { return bytes - (bytes - kChunkBytes - 1) / kChunkBytes * kChunkBytes; }

}  // namespace

void SizedBlocks::receive(CollectiveContext& ctx, int from, uint32_t step, uint32_t sizeStep, char* data, size_t bytes,
                          bool chunked) {
  if (bytes == 0) return;
  if (!inChunks(bytes, chunked)) {
    posted_.push_back(ctx.recv(from, step, data, bytes));
    return;
  }
  const size_t first = firstChunkBytes(bytes);
  // The first chunk before the size: a sender of a whole block answers it
  // with a size mismatch, where the size receive would wait for nothing.
  posted_.push_back(ctx.recv(from, step, data, first));
  sizeReceive_ = posted_.size();
  posted_.push_back(ctx.recv(from, sizeStep, &announced_, sizeof announced_));
  expected_ = bytes;
  from_ = from;
  postReceiveChunks(ctx, from, step, data + first, bytes - first, kChunkBytes).appendTo(posted_);
}

void SizedBlocks::send(CollectiveContext& ctx, int to, uint32_t step, uint32_t sizeStep, const char* data, size_t bytes,
                       bool chunked) {
  if (bytes == 0) return;
  if (!inChunks(bytes, chunked)) {
    posted_.push_back(ctx.send(to, step, data, bytes));
    return;
  }
  sending_ = bytes;
  posted_.push_back(ctx.send(to, sizeStep, &sending_, sizeof sending_));
  const size_t first = firstChunkBytes(bytes);
  posted_.push_back(ctx.send(to, step, data, first));
  sendChunks(ctx, to, step, data + first, bytes - first, kChunkBytes).appendTo(posted_);
}

void SizedBlocks::wait(CollectiveContext& ctx) {
  for (size_t i = 0; i < posted_.size(); ++i) {
    ctx.wait(posted_[i]);
    if (i == sizeReceive_ && announced_ != expected_) {
      const int sender = ctx.communicatorRank(from_), self = ctx.communicatorRank(ctx.rank());
      ctx.failDisagreement(fmt::format("rank {} sends {} bytes to rank {} vs rank {} expecting {} from it", sender,
                                       announced_, self, self, expected_));
    }
  }
}

}  // namespace comm::algo
