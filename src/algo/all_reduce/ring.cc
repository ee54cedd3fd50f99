// Ring all-reduce: a ring reduce-scatter (algo/reduce_scatter/ring.cc)
// leaves rank r with block r of the result, then a ring all-gather passes
// each finished block once around the ring. Both phases stream in chunks,
// and the all-gather starts with each chunk of rank r's block the moment
// the reduce-scatter finishes it, so the phases overlap too. Each block is
// reduced at one rank only and then copied, so every rank holds identical
// bits. Counts not divisible by n give blocks one element apart; counts
// below n leave some blocks empty, which are never sent.
// Cost for N bytes: 2 (n-1) alpha + 2 (n-1)/n N beta + (n-1)/n N gamma:
// bandwidth-optimal, the choice for large vectors.
#include "algo/all_reduce/ring.h"

#include <vector>

#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "algo/patterns/ring.h"
#include "algo/reduce_scatter/ring.h"
#include "common/dtype.h"

namespace comm::algo {

void ringAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  ringAllReduce(ctx, in, out, count, dtype, op, {});
}

void ringAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                   const RingAllReduceHooks& hooks) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  const RingNeighbours ring = ringNeighbours(rank, n);
  const int left = ring.left, right = ring.right;
  const size_t elementSize = dtypeSize(dtype);
  auto* data = static_cast<char*>(out);
  Blocks blocks = Blocks::even(count, n);
  auto blockAt = [&](int b) { return data + blocks.offsets()[(b % n + n) % n] * elementSize; };
  auto blockBytes = [&](int b) { return blocks.counts()[(b % n + n) % n] * elementSize; };

  // The reduce-scatter uses steps [0, n-1); all-gather step t is gatherStep + t.
  const auto gatherStep = static_cast<uint32_t>(n - 1);
  char* mine = blockAt(rank);
  std::vector<RequestId> sent;
  auto final = [&](int b, size_t offset, size_t bytes) {
    if (hooks.onFinal) hooks.onFinal(blockAt(b) - data + offset, bytes);
  };
  ringReduceScatter(
      ctx, in, mine, blocks, dtype, op, 0,
      [&](size_t offset, size_t bytes) {
        sent.push_back(ctx.send(right, gatherStep, mine + offset, bytes));
        final(rank, offset, bytes);
      },
      hooks.beforeReading);
  // The reduce-scatter no longer reads `in`, so its blocks may now be overwritten.
  for (int t = 0; t < n - 1; ++t) {
    char* block = blockAt(rank - t - 1);
    bool last = t == n - 2;
    receiveChunks(ctx, left, gatherStep + t, block, blockBytes(rank - t - 1), [&](size_t offset, size_t bytes) {
      if (!last) sent.push_back(ctx.send(right, gatherStep + t + 1, block + offset, bytes));
      final(rank - t - 1, offset, bytes);
    });
  }
  // The caller may divide `out` for AVG as soon as this returns.
  waitEach(ctx, sent);
}

}  // namespace comm::algo
