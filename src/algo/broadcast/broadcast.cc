// comm::algo::broadcast: the dispatch from the selection table to an algorithm.
#include "algo/board_collectives.h"
#include "algo/broadcast/binomial.h"
#include "algo/broadcast/hierarchical.h"
#include "algo/broadcast/scatter_all_gather.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/selection.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, void* buffer, size_t bytes, int root);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardBroadcast},
    {{"hierarchical", spansNodes}, hierarchicalBroadcast},
    {{"binomial"}, binomialBroadcast},
    {{"scatter_all_gather"}, scatterAllGatherBroadcast},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    rule(kInfo, "binomial", 128 * 1024, kAnyRanks),
    rule(kInfo, "binomial", kAnyBytes, 2),
    rule(kInfo, "scatter_all_gather", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kBroadcastTable{core::CollectiveKind::kBroadcast, kInfo, kRules};

void flatBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  const Situation flat{bytes, ctx.size()};
  kAlgorithms[kBroadcastTable.choose(flat)].run(ctx, buffer, bytes, root);
}

void broadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  kAlgorithms[choose(ctx, bytes)].run(ctx, buffer, bytes, root);
}

}  // namespace comm::algo
