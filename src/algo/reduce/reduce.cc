// comm::algo::reduce: the dispatch from the selection table to an algorithm.
#include <cstring>

#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/reduce/binomial.h"
#include "algo/reduce/hierarchical.h"
#include "algo/reduce/reduce_scatter_gather.h"
#include "algo/selection/selection.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                         int root);

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its vector on the node board; the root combines all entries in rank order",
      .fits = fitsBoard},
     boardReduce},
    {{.name = "hierarchical",
      .summary = "reduce to a leader within each node, then among the leaders to the root",
      .fits = spansNodes,
      .ordersRanksItself = true},
     hierarchicalReduce},
    {{.name = "binomial", .summary = "binomial tree to the root, forwarding each chunk once its children's arrived"},
     binomialReduce},
    {{.name = "reduce_scatter_gather",
      .summary = "ring reduce-scatter, each finished block sent on to the root (Rabenseifner's reduce)"},
     reduceScatterGatherReduce},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr bool kWithoutBoard = true;
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Across nodes every node but the root's sends the vector out exactly once.
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    // Two ranks without a board: the tree sends the vector once, the other 1.5 times.
    rule(kInfo, "binomial", kAnyBytes, 2, kWithoutBoard),
    // While latency dominates, log2 n steps beat the ring's n-1.
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
    // Larger: every rank reduces 1/n, and the root's link carries the least.
    rule(kInfo, "reduce_scatter_gather", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kReduceTable{core::CollectiveKind::kReduce, kInfo, kRules};

void flatReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                int root) {
  kAlgorithms[chooseFlat(ctx, kReduceTable, count * dtypeSize(dtype))].run(ctx, in, out, count, dtype, op, root);
}

void reduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
            int root) {
  size_t bytes = count * dtypeSize(dtype);
  int algorithm = choose(ctx, bytes);
  if (ctx.size() == 1 || count == 0) {
    if (ctx.rank() == root && in != out && bytes > 0) std::memcpy(out, in, bytes);
  } else {
    kAlgorithms[algorithm].run(ctx, in, out, count, dtype, op, root);
  }
  // Every algorithm combines AVG like SUM; the one division is here, on the root's whole sum.
  if (op == COMM_OP_AVG && ctx.rank() == root) reduce::finishAverage(out, count, dtype, ctx.size());
}

}  // namespace comm::algo
