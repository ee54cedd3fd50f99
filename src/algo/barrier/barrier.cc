// comm::algo::barrier: the dispatch from the selection table to an algorithm.
#include "algo/barrier/dissemination.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/selection.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&);

// The barrier publishes no payload: the board serves any group it has.
bool hasBoard(const Situation& situation) { return situation.hasBoard; }

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", hasBoard}, boardBarrier},
    {{"dissemination"}, disseminationBarrier},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "dissemination", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kBarrierTable{core::CollectiveKind::kBarrier, kInfo, kRules};

void barrier(CollectiveContext& ctx) { kAlgorithms[choose(ctx, 0)].run(ctx); }

}  // namespace comm::algo
