// Reduce as a ring reduce-scatter (algo/reduce_scatter/ring.cc) followed by
// a gather of the blocks to the root (Rabenseifner's reduce). Every rank
// reduces 1/n of the vector instead of the root reducing all of it, and
// each non-root sends each chunk of its block to the root the moment the
// reduce-scatter finishes it. The root's link carries (n-1)/n N, the least
// any reduce can. For large vectors.
// Cost for N bytes: (n-1) alpha + (n-1)/n N gamma for the reduce-scatter,
// whose traffic overlaps the gather's, + about 2 (n-1)/n N beta in all.
#include "algo/reduce/reduce_scatter_gather.h"

#include <memory>

#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "algo/reduce_scatter/ring.h"
#include "common/dtype.h"

namespace comm::algo {

void reduceScatterGatherReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                               comm_op_t op, int root) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  const size_t elementSize = dtypeSize(dtype);
  const bool isRoot = rank == root;
  Blocks blocks = Blocks::even(count, n);

  // The reduce-scatter uses steps [0, n-1); the gather is the next one.
  const auto gatherStep = static_cast<uint32_t>(n - 1);
  // Not the landing area: the reduce-scatter lands its messages there.
  char* mine = isRoot ? static_cast<char*>(out) + blocks.offsets()[rank] * elementSize
                      : ctx.scratch(core::Scratch::kResult, blocks.counts()[rank] * elementSize);
  std::vector<RequestId> pending;
  ChunkFn toRoot = [&](size_t offset, size_t bytes) {
    pending.push_back(ctx.send(root, gatherStep, mine + offset, bytes));
  };
  ringReduceScatter(ctx, in, mine, blocks, dtype, op, 0, isRoot ? ChunkFn{} : toRoot);
  if (isRoot) {
    // Only now: in place, the reduce-scatter was still reading these blocks of `in`.
    for (int q = 0; q < n; ++q) {
      if (q == root) continue;
      char* block = static_cast<char*>(out) + blocks.offsets()[q] * elementSize;
      postReceiveChunks(ctx, q, gatherStep, block, blocks.counts()[q] * elementSize).appendTo(pending);
    }
  }
  waitEach(ctx, pending);
}

}  // namespace comm::algo
