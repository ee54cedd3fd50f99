// comm::algo::barrier: the dispatch from the selection table to an algorithm.
#include "algo/barrier/dissemination.h"
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection/selection.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&);

// The barrier publishes no payload: the board serves any group it has.
bool hasBoard(const Situation& situation) { return situation.hasBoard; }

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its arrival on the node board and waits for all",
      .fits = hasBoard},
     boardBarrier},
    {{.name = "dissemination", .summary = "in round k signal rank+2^k and wait for rank-2^k: ceil(log2 n) rounds"},
     disseminationBarrier},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node: one store and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // The fewest rounds for any group size.
    rule(kInfo, "dissemination", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kBarrierTable{core::CollectiveKind::kBarrier, kInfo, kRules};

void barrier(CollectiveContext& ctx) { kAlgorithms[choose(ctx, 0)].run(ctx); }

}  // namespace comm::algo
