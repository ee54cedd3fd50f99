// Ring all-gather: in step s every rank passes the block it received in step
// s-1 (its own in step 0) to its right neighbour and receives the next one
// from its left, straight into place. Each rank only ever talks to its two
// neighbours, and every block crosses each link once.
// Cost: (n-1) alpha + (n-1)/n N beta for an output of N bytes -- optimal in
// bandwidth, linear in latency, so it is the large-message algorithm. Uneven
// blocks are fine; the step time follows the largest block in flight.
// Over comm's TCP transport a block travels in chunks (algo/blocks/pipeline.h),
// each passed on as soon as it is in, so the steps overlap.
#include "algo/all_gather/ring.h"

#include "algo/blocks/block_messages.h"
#include "algo/blocks/pipeline.h"
#include "algo/patterns/ring.h"

namespace comm::algo {

void ringAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  ringAllGather(ctx, in, out, bytes, offsets, {});
}

void ringAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   const ChunkFn& onFinal) {
  int n = ctx.size();
  int rank = ctx.rank();
  char* data = static_cast<char*>(out);
  auto final = [&](size_t offset, size_t size) {
    if (onFinal && size > 0) onFinal(offset, size);
  };
  if (n == 1) {
    copyBlock(ctx, data + offsets[rank], in, bytes[rank]);
    return final(offsets[rank], bytes[rank]);
  }
  const RingNeighbours ring = ringNeighbours(rank, n);
  const int left = ring.left, right = ring.right;
  const size_t chunk = transferChunkBytes(ctx);
  // The block a rank receives in step s, and passes on in step s+1 (its own goes in step 0).
  auto blockOf = [&](int step) { return (rank - step - 1 + n) % n; };
  auto post = [&](int step) {
    int block = blockOf(step);
    return postReceiveChunks(ctx, left, step, data + offsets[block], bytes[block], chunk);
  };
  // Each step's receives are out before the previous step is awaited, so
  // its messages find their buffers rather than the unexpected queue.
  RequestRange received = post(0);
  // A rank's own block leaves from the input, so the copy into the output
  // overlaps the first step's transfer instead of delaying it.
  sendChunks(ctx, right, 0, in, bytes[rank], chunk);
  copyBlock(ctx, data + offsets[rank], in, bytes[rank]);
  final(offsets[rank], bytes[rank]);
  for (int step = 0; step < n - 1; ++step) {
    const bool last = step == n - 2;
    RequestRange next = last ? RequestRange{} : post(step + 1);
    const size_t blockOffset = offsets[blockOf(step)];
    awaitChunks(ctx, received, bytes[blockOf(step)], chunk, [&](size_t offset, size_t size) {
      if (!last) ctx.send(right, step + 1, data + blockOffset + offset, size);
      final(blockOffset + offset, size);
    });
    received = next;
  }
}

}  // namespace comm::algo
