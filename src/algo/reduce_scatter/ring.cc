// Ring reduce-scatter (Patarasuk and Yuan's bandwidth-optimal ring). Rank r
// starts by sending its block r-1 to its right neighbour. In step s it
// receives from its left the partial result of block r-s-2, adds its own
// contribution and passes it right, so each block travels once around the
// ring and arrives complete at its owner after n-1 steps. Each step streams
// in chunks: a chunk is reduced and forwarded while the next is on the wire,
// so the steps overlap. Every block is reduced at one rank in one fixed
// order (the arriving partial first), so results are deterministic.
// Cost for a vector of N bytes in equal blocks: (n-1) alpha + (n-1)/n N beta
// + (n-1)/n N gamma; with unequal blocks each step pays for its block, and
// empty blocks send nothing.
#include "algo/reduce_scatter/ring.h"
#include "algo/patterns/ring.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {

void ringReduceScatter(CollectiveContext& ctx, const void* in, void* mine, const Blocks& blocks, comm_dtype_t dtype,
                       comm_op_t op, uint32_t stepBase, const ChunkFn& onChunk, const ChunkFn& beforeReading) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  const RingNeighbours ring = ringNeighbours(rank, n);
  const int left = ring.left, right = ring.right;
  const size_t elementSize = dtypeSize(dtype);
  auto* src = static_cast<const char*>(in);
  auto* dest = static_cast<char*>(mine);
  auto blockBefore = [&](int distance) { return ((rank - distance) % n + n) % n; };
  auto aboutToRead = [&](int block, size_t offset, size_t bytes) {
    if (beforeReading) beforeReading(blocks.offsets()[block] * elementSize + offset, bytes);
  };

  // Step s < n-2 receives into buffer s % 2, reduces into it and forwards
  // from it; step s+2 reuses it once those forwards have left. One buffer
  // per step in flight is what keeps a rank from waiting on a neighbour that
  // waits on it. The last step reduces straight into `mine` from staging.
  size_t largest = *std::max_element(blocks.counts(), blocks.counts() + n) * elementSize;
  char* scratch = ctx.scratch(core::Scratch::kLanding, std::min(n - 2, 2) * largest);
  std::vector<RequestId> forwarded[2];

  int first = blockBefore(1);
  RequestRange sent = sendChunks(ctx, right, stepBase, src + blocks.offsets()[first] * elementSize,
                                 blocks.counts()[first] * elementSize, kChunkBytes,
                                 [&](size_t offset, size_t bytes) { aboutToRead(first, offset, bytes); });
  for (int s = 0; s < n - 2; ++s) {
    char* buffer = scratch + (s % 2) * largest;
    waitEach(ctx, forwarded[s % 2]);
    forwarded[s % 2].clear();
    int block = blockBefore(s + 2);
    const char* own = src + blocks.offsets()[block] * elementSize;
    receiveChunks(ctx, left, stepBase + s, buffer, blocks.counts()[block] * elementSize,
                  [&](size_t offset, size_t bytes) {
                    char* result = buffer + offset;
                    aboutToRead(block, offset, bytes);
                    reduce::combine(result, result, own + offset, bytes / elementSize, dtype, op);
                    forwarded[s % 2].push_back(ctx.send(right, stepBase + s + 1, result, bytes));
                  });
  }
  const char* own = src + blocks.offsets()[rank] * elementSize;
  receiveStaged(ctx, left, stepBase + n - 2, blocks.counts()[rank] * elementSize,
                [&](size_t offset, size_t bytes, const char* staged) {
                  aboutToRead(rank, offset, bytes);
                  reduce::combine(dest + offset, staged, own + offset, bytes / elementSize, dtype, op);
                  if (onChunk) onChunk(offset, bytes);
                });
  waitEach(ctx, sent);
  waitEach(ctx, forwarded[0]);
  waitEach(ctx, forwarded[1]);
}

}  // namespace comm::algo
