// comm::algo::broadcast: the dispatch from the selection table to an algorithm.
#include "algo/blocks/board_collectives.h"
#include "algo/broadcast/binomial.h"
#include "algo/broadcast/hierarchical.h"
#include "algo/broadcast/scatter_all_gather.h"
#include "algo/collectives.h"
#include "algo/selection/selection.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, void* buffer, size_t bytes, int root);

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "the root publishes the message on the node board; the others copy it out",
      .fits = fitsBoard},
     boardBroadcast},
    {{.name = "hierarchical",
      .summary = "broadcast among one leader per node, then within each node",
      .fits = spansNodes,
      .ordersRanksItself = true},
     hierarchicalBroadcast},
    {{.name = "binomial", .summary = "binomial tree from the root, largest subtree first: fewest messages"},
     binomialBroadcast},
    {{.name = "scatter_all_gather",
      .summary = "binomial scatter of n chunks, then ring all-gather (van de Geijn): fewest bytes per link"},
     scatterAllGatherBroadcast},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at the root's entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Across nodes every node but the root's receives the message exactly once.
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 n messages beat sending about 2N.
    rule(kInfo, "binomial", 128 * 1024, kAnyRanks),
    // Two ranks gain nothing from splitting: the root still sends N.
    rule(kInfo, "binomial", kAnyBytes, 2),
    // Larger messages: each link carries about 2 (n-1)/n N instead of N per tree level.
    rule(kInfo, "scatter_all_gather", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kBroadcastTable{core::CollectiveKind::kBroadcast, kInfo, kRules};

void flatBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  kAlgorithms[chooseFlat(ctx, kBroadcastTable, bytes)].run(ctx, buffer, bytes, root);
}

void broadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  kAlgorithms[choose(ctx, bytes)].run(ctx, buffer, bytes, root);
}

}  // namespace comm::algo
