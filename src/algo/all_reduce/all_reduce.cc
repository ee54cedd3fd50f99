// comm::algo::allReduce: the dispatch from the selection table to an algorithm.
#include <cstring>

#include "algo/all_reduce/hierarchical.h"
#include "algo/all_reduce/node_leaders.h"
#include "algo/all_reduce/rabenseifner.h"
#include "algo/all_reduce/recursive_doubling.h"
#include "algo/all_reduce/ring.h"
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection/selection.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);
using AlgorithmFnWithHooks = void(CollectiveContext&, const void* in, void* out, size_t count, comm_dtype_t dtype,
                                  comm_op_t op, const RingAllReduceHooks& hooks);

constexpr Algorithm<AlgorithmFn, AlgorithmFnWithHooks> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its vector on the node board and combines all entries in rank order",
      .fits = fitsBoard},
     boardAllReduce},
    {{.name = "hierarchical",
      .summary = "reduce-scatter within each node, all_reduce by local rank across nodes, all-gather within each node",
      .fits = evenNodes,
      .ordersRanksItself = true},
     hierarchicalAllReduce},
    {{.name = "node_leaders",
      .summary = "reduce to each node's first rank, all_reduce among those leaders, broadcast within each node",
      .fits = nodesOfSeveralRanks,
      .ordersRanksItself = true},
     nodeLeadersAllReduce},
    {{.name = "recursive_doubling",
      .summary = "swap and combine whole partial results at distance 1, 2, 4, ...: fewest messages"},
     recursiveDoublingAllReduce},
    {{.name = "rabenseifner", .summary = "reduce-scatter by recursive halving, then all-gather by recursive doubling"},
     rabenseifnerAllReduce},
    {{.name = "ring",
      .summary = "ring reduce-scatter then ring all-gather, pipelined in chunks: fewest bytes per link"},
     ringAllReduce,
     ringAllReduce},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Across nodes, one network message per node pair and step (node_leaders)
    // beats the hierarchical one's message per local rank: each costs its sender
    // and receiver the whole network stack, and up to here L streams per
    // node pair move the bytes no faster than one (docs/algorithms.md); at
    // 2x2 that holds up to 1 MiB,
    rule(kInfo, "node_leaders", 1024 * 1024, 4),
    // and at larger groups up to 256 KiB.
    rule(kInfo, "node_leaders", 256 * 1024, kAnyRanks),
    // Beyond, each node's link carries the least, 2 (H-1)/H N, whatever the placement.
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    // Nodes of different sizes: the only algorithm that crosses them once per node.
    rule(kInfo, "node_leaders", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 p messages beat moving half the bytes.
    rule(kInfo, "recursive_doubling", 16 * 1024, kAnyRanks),
    // Fewer messages than the ring at the same bandwidth, until a fold's extra N costs more.
    rule(kInfo, "rabenseifner", 512 * 1024, kAnyRanks),
    // Neighbour-only, fully pipelined streaming wins at any group size.
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllReduceTable{core::CollectiveKind::kAllReduce, kInfo, kRules};

void flatAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                   const RingAllReduceHooks& hooks) {
  const size_t bytes = count * dtypeSize(dtype);
  const Algorithm<AlgorithmFn, AlgorithmFnWithHooks>& algorithm = kAlgorithms[chooseFlat(ctx, kAllReduceTable, bytes)];
  if (algorithm.info.takesHooks) return algorithm.runWithHooks(ctx, in, out, count, dtype, op, hooks);
  if (hooks.beforeReading) hooks.beforeReading(0, bytes);
  algorithm.run(ctx, in, out, count, dtype, op);
  if (hooks.onFinal) hooks.onFinal(0, bytes);
}

void allReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  size_t bytes = count * dtypeSize(dtype);
  const Algorithm<AlgorithmFn, AlgorithmFnWithHooks>& algorithm = kAlgorithms[choose(ctx, bytes)];
  if (ctx.size() == 1 || count == 0) {
    if (in != out && bytes > 0) std::memcpy(out, in, bytes);
  } else if (ctx.communicator().nodes().blocked || algorithm.info.ordersRanksItself) {
    algorithm.run(ctx, in, out, count, dtype, op);
  } else {
    // Ranks placed round-robin: a flat ring in rank order would cross
    // between nodes at every step; in node order it crosses as few times as
    // with block placement (docs/algorithms.md).
    CollectiveContext::Subgroup inNodeOrder(ctx, ctx.communicator().nodes().byNode, 0);
    algorithm.run(ctx, in, out, count, dtype, op);
  }
  // Every algorithm combines AVG like SUM; the one division is here, on the whole sum.
  if (op == COMM_OP_AVG) reduce::finishAverage(out, count, dtype, ctx.size());
}

}  // namespace comm::algo
