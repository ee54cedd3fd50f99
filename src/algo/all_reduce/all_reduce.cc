// comm::algo::allReduce: the dispatch from the selection table to an algorithm.
#include <cstring>

#include "algo/all_reduce/hierarchical.h"
#include "algo/all_reduce/node_leaders.h"
#include "algo/all_reduce/rabenseifner.h"
#include "algo/all_reduce/recursive_doubling.h"
#include "algo/all_reduce/ring.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/selection.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardAllReduce},
    {{"hierarchical", evenNodes}, hierarchicalAllReduce},
    {{"node_leaders", nodesOfSeveralRanks}, nodeLeadersAllReduce},
    {{"recursive_doubling"}, recursiveDoublingAllReduce},
    {{"rabenseifner"}, rabenseifnerAllReduce},
    {{"ring"}, ringAllReduce},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// Across nodes, up to 256 KiB (1 MiB at 2x2), one message per node pair
// and step (node_leaders) beats the hierarchical one's message per place:
// each network message costs its sender and receiver the whole network
// stack, and up to there L streams per node pair move the bytes no faster
// than one (docs/algorithms.md).
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),         rule(kInfo, "node_leaders", 1024 * 1024, 4),
    rule(kInfo, "node_leaders", 256 * 1024, kAnyRanks), rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    rule(kInfo, "node_leaders", kAnyBytes, kAnyRanks),  rule(kInfo, "recursive_doubling", 16 * 1024, kAnyRanks),
    rule(kInfo, "rabenseifner", 512 * 1024, kAnyRanks), rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllReduceTable{core::CollectiveKind::kAllReduce, kInfo, kRules};

void flatAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                   const RingAllReduceHooks& hooks) {
  const size_t bytes = count * dtypeSize(dtype);
  Run* run = kAlgorithms[kAllReduceTable.choose({bytes, ctx.size()})].run;
  if (run == static_cast<Run*>(ringAllReduce)) return ringAllReduce(ctx, in, out, count, dtype, op, hooks);
  if (hooks.beforeReading) hooks.beforeReading(0, bytes);
  run(ctx, in, out, count, dtype, op);
  if (hooks.onFinal) hooks.onFinal(0, bytes);
}

void allReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  size_t bytes = count * dtypeSize(dtype);
  int algorithm = choose(ctx, bytes);
  if (ctx.size() == 1 || count == 0) {
    if (in != out && bytes > 0) std::memcpy(out, in, bytes);
  } else if (ctx.communicator().nodes().blocked || kAlgorithms[algorithm].run == hierarchicalAllReduce ||
             kAlgorithms[algorithm].run == nodeLeadersAllReduce) {
    kAlgorithms[algorithm].run(ctx, in, out, count, dtype, op);
  } else {
    // Ranks placed round-robin: a flat ring in rank order would cross
    // between nodes at every step; in node order it crosses as few times as
    // with block placement (docs/algorithms.md).
    CollectiveContext::Subgroup inNodeOrder(ctx, ctx.communicator().nodes().byNode, 0);
    kAlgorithms[algorithm].run(ctx, in, out, count, dtype, op);
  }
  // Every algorithm combines AVG like SUM; the one division is here, on the whole sum.
  if (op == COMM_OP_AVG) reduce::finishAverage(out, count, dtype, ctx.size());
}

}  // namespace comm::algo
