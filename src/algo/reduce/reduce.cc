// comm::algo::reduce: the dispatch from the selection table to an algorithm.
#include <cstring>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/reduce/binomial.h"
#include "algo/reduce/hierarchical.h"
#include "algo/reduce/reduce_scatter_gather.h"
#include "algo/registry.h"
#include "algo/selection.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                 int root);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardReduce},
    {{"hierarchical", spansNodes}, hierarchicalReduce},
    {{"binomial"}, binomialReduce},
    {{"reduce_scatter_gather"}, reduceScatterGatherReduce},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr bool kWithoutBoard = true;
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    rule(kInfo, "binomial", kAnyBytes, 2, kWithoutBoard),
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
    rule(kInfo, "reduce_scatter_gather", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kReduceTable{core::CollectiveKind::kReduce, kInfo, kRules};

void flatReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                int root) {
  const Situation flat{count * dtypeSize(dtype), ctx.size()};
  kAlgorithms[kReduceTable.choose(flat)].run(ctx, in, out, count, dtype, op, root);
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
