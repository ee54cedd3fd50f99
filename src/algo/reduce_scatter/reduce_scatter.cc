// comm::algo::reduceScatterV (reduce_scatter and reduce_scatter_v): the
// dispatch from the selection table to an algorithm. The message size that
// selects is the whole input vector.
#include <cstring>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/patterns/element_blocks.h"
#include "algo/reduce_scatter/hierarchical.h"
#include "algo/reduce_scatter/recursive_halving.h"
#include "algo/reduce_scatter/ring.h"
#include "algo/registry.h"
#include "algo/selection.h"
#include "common/dtype.h"
#include "common/error.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, const ElementBlocks& blocks, comm_dtype_t dtype,
                 comm_op_t op);

void board(CollectiveContext& ctx, const void* in, void* out, const ElementBlocks& blocks, comm_dtype_t dtype,
           comm_op_t op) {
  boardReduceScatter(ctx, in, out, blocks.counts.data(), blocks.offsets.data(), dtype, op);
}

void ring(CollectiveContext& ctx, const void* in, void* out, const ElementBlocks& blocks, comm_dtype_t dtype,
          comm_op_t op) {
  ringReduceScatter(ctx, in, out, blocks, dtype, op, 0);
}

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, board},
    {{"hierarchical", evenNodes}, hierarchicalReduceScatter},
    {{"recursive_halving"}, recursiveHalvingReduceScatter},
    {{"ring"}, ring},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// Across nodes, small calls take recursive halving: its rounds cost less
// than the hierarchical algorithm's phases and handshakes within each
// node, though it sends more across; beyond 4 KiB the link rate decides,
// and the hierarchical one sends the least
// (docs/dev/performance-history.md).
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),        rule(kInfo, "recursive_halving", 4 * 1024, kAnyRanks),
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks), rule(kInfo, "recursive_halving", 64 * 1024, kAnyRanks),
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kReduceScatterTable{core::CollectiveKind::kReduceScatter, kInfo, kRules};
extern const CollectiveTable kReduceScatterVTable{core::CollectiveKind::kReduceScatterV, kInfo, kRules};

void flatReduceScatter(CollectiveContext& ctx, const void* in, void* out, const ElementBlocks& blocks,
                       comm_dtype_t dtype, comm_op_t op, const ChunkFn& beforeReading) {
  const size_t bytes = blocks.total() * dtypeSize(dtype);
  Run* const run = kAlgorithms[kReduceScatterTable.choose({bytes, ctx.size()})].run;
  if (run == static_cast<Run*>(ring)) return ringReduceScatter(ctx, in, out, blocks, dtype, op, 0, {}, beforeReading);
  if (beforeReading) beforeReading(0, bytes);
  run(ctx, in, out, blocks, dtype, op);
}

void reduceScatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                    comm_dtype_t dtype, comm_op_t op) {
  const int n = ctx.size();
  const size_t elementSize = dtypeSize(dtype);
  ElementBlocks blocks = ElementBlocks::fromCounts(counts, n);
  for (int r = 0; r < n; ++r) {
    if (offsets[r] != blocks.offsets[r]) {
      fail(COMM_ERR_INTERNAL, "reduce_scatter: block {} starts at element {}, not right after block {}", r, offsets[r],
           r - 1);
    }
  }
  int algorithm = choose(ctx, blocks.total() * elementSize);
  if (n == 1 || blocks.total() == 0) {
    const char* own = static_cast<const char*>(in) + blocks.offsets[ctx.rank()] * elementSize;
    size_t bytes = blocks.counts[ctx.rank()] * elementSize;
    if (own != out && bytes > 0) std::memcpy(out, own, bytes);
  } else {
    kAlgorithms[algorithm].run(ctx, in, out, blocks, dtype, op);
  }
  // Every algorithm combines AVG like SUM; the one division is here, on this rank's whole block.
  if (op == COMM_OP_AVG) reduce::finishAverage(out, blocks.counts[ctx.rank()], dtype, n);
}

}  // namespace comm::algo
