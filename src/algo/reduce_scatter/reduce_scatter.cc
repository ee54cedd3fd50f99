// comm::algo::reduceScatterV (reduce_scatter and reduce_scatter_v): the
// dispatch from the selection table to an algorithm. The message size that
// selects is the whole input vector.
#include <cstring>

#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/patterns/blocks.h"
#include "algo/reduce_scatter/hierarchical.h"
#include "algo/reduce_scatter/recursive_halving.h"
#include "algo/reduce_scatter/ring.h"
#include "algo/selection/selection.h"
#include "common/dtype.h"
#include "common/error.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype,
                         comm_op_t op);
using AlgorithmFnWithHooks = void(CollectiveContext&, const void* in, void* out, const Blocks& blocks,
                                  comm_dtype_t dtype, comm_op_t op, const ChunkFn& beforeReading);

void board(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype, comm_op_t op) {
  boardReduceScatter(ctx, in, out, blocks.counts(), blocks.offsets(), dtype, op);
}

void ring(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype, comm_op_t op) {
  ringReduceScatter(ctx, in, out, blocks, dtype, op, 0);
}

void ringWithHooks(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype,
                   comm_op_t op, const ChunkFn& beforeReading) {
  ringReduceScatter(ctx, in, out, blocks, dtype, op, 0, {}, beforeReading);
}

constexpr Algorithm<AlgorithmFn, AlgorithmFnWithHooks> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its vector on the node board and combines its own block from all entries",
      .fits = fitsBoard},
     board},
    {{.name = "hierarchical",
      .summary = "reduce-scatter within each node by local rank, then across nodes among the ranks of each local rank",
      .fits = evenNodes,
      .ordersRanksItself = true},
     hierarchicalReduceScatter},
    {{.name = "recursive_halving",
      .summary = "keep half the blocks and swap the other half at distance p/2, p/4, ..., 1: fewest messages"},
     recursiveHalvingReduceScatter},
    {{.name = "ring", .summary = "each block goes once around the ring, combined at every rank: fewest bytes per link"},
     ring,
     ringWithHooks},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Small calls, across nodes too: its rounds cost less than the
    // hierarchical one's phases and handshakes within each node, though it
    // sends more across (docs/dev/performance-history.md).
    rule(kInfo, "recursive_halving", 4 * 1024, kAnyRanks),
    // Beyond 4 KiB across nodes the link rate decides, and the hierarchical one sends the least.
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 p rounds beat the ring's n-1.
    rule(kInfo, "recursive_halving", 64 * 1024, kAnyRanks),
    // Neighbour-only, pipelined steps at the same bytes per link, any group size without a fold.
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kReduceScatterTable{core::CollectiveKind::kReduceScatter, kInfo, kRules};
extern const CollectiveTable kReduceScatterVTable{core::CollectiveKind::kReduceScatterV, kInfo, kRules};

void flatReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks, comm_dtype_t dtype,
                       comm_op_t op, const ChunkFn& beforeReading) {
  const size_t bytes = blocks.total() * dtypeSize(dtype);
  // reduce_scatter_v's phases follow its own COMM_ALGO entry.
  const CollectiveTable& table =
      static_cast<core::CollectiveKind>(ctx.signature().kind) == core::CollectiveKind::kReduceScatterV
          ? kReduceScatterVTable
          : kReduceScatterTable;
  const Algorithm<AlgorithmFn, AlgorithmFnWithHooks>& algorithm = kAlgorithms[chooseFlat(ctx, table, bytes)];
  if (algorithm.info.takesHooks) return algorithm.runWithHooks(ctx, in, out, blocks, dtype, op, beforeReading);
  if (beforeReading) beforeReading(0, bytes);
  algorithm.run(ctx, in, out, blocks, dtype, op);
}

void reduceScatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                    comm_dtype_t dtype, comm_op_t op) {
  const int n = ctx.size();
  const size_t elementSize = dtypeSize(dtype);
  Blocks blocks = Blocks::fromCounts(counts, n);
  for (int r = 0; r < n; ++r) {
    if (offsets[r] != blocks.offsets()[r]) {
      fail(COMM_ERR_INTERNAL, "reduce_scatter: block {} starts at element {}, not right after block {}", r, offsets[r],
           r - 1);
    }
  }
  int algorithm = choose(ctx, blocks.total() * elementSize);
  if (n == 1 || blocks.total() == 0) {
    const char* own = static_cast<const char*>(in) + blocks.offsets()[ctx.rank()] * elementSize;
    size_t bytes = blocks.counts()[ctx.rank()] * elementSize;
    if (own != out && bytes > 0) std::memcpy(out, own, bytes);
  } else {
    kAlgorithms[algorithm].run(ctx, in, out, blocks, dtype, op);
  }
  // Every algorithm combines AVG like SUM; the one division is here, on this rank's whole block.
  if (op == COMM_OP_AVG) reduce::finishAverage(out, blocks.counts()[ctx.rank()], dtype, n);
}

}  // namespace comm::algo
