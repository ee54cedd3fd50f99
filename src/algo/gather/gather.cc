// comm::algo::gatherV: the dispatch from the selection table to an
// algorithm; gather and gather_v share it and the algorithms.
#include <numeric>

#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/gather/binomial.h"
#include "algo/gather/linear.h"
#include "algo/selection/selection.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                         int root);

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its block on the node board; the root copies them out",
      .fits = fitsBoard},
     boardGather},
    {{.name = "binomial", .summary = "binomial tree to the root, each subtree's blocks sent up together"},
     binomialGather},
    {{.name = "linear", .summary = "every rank sends its block straight to the root, all at once"}, linearGather},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 n messages at the root beat n-1.
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
    // Larger: no forwarding and no copies of subtrees.
    rule(kInfo, "linear", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kGatherTable{core::CollectiveKind::kGather, kInfo, kRules};
extern const CollectiveTable kGatherVTable{core::CollectiveKind::kGatherV, kInfo, kRules};

void gatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root) {
  int algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  kAlgorithms[algorithm].run(ctx, in, out, bytes, offsets, root);
}

}  // namespace comm::algo
