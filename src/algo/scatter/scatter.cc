// comm::algo::scatterV: the dispatch from the selection table to an
// algorithm; scatter and scatter_v share it and the algorithms.
#include <numeric>

#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/scatter/binomial.h"
#include "algo/scatter/linear.h"
#include "algo/selection/selection.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                         int root);

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "the root publishes every block on the node board; each rank copies its own",
      .fits = fitsBoard},
     boardScatter},
    {{.name = "binomial", .summary = "binomial tree from the root, each subtree's blocks sent down together"},
     binomialScatter},
    {{.name = "linear", .summary = "the root sends every rank its block straight, all at once"}, linearScatter},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at the root's entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 n messages at the root beat n-1.
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
    // Larger: no forwarding and no copies of subtrees.
    rule(kInfo, "linear", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kScatterTable{core::CollectiveKind::kScatter, kInfo, kRules};
extern const CollectiveTable kScatterVTable{core::CollectiveKind::kScatterV, kInfo, kRules};

void scatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root) {
  int algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  kAlgorithms[algorithm].run(ctx, in, out, bytes, offsets, root);
}

}  // namespace comm::algo
