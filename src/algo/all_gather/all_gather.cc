// comm::algo::allGatherV: the dispatch from the selection table to an
// algorithm; all_gather and all_gather_v share it and the algorithms.
#include <numeric>

#include "algo/all_gather/bruck.h"
#include "algo/all_gather/recursive_doubling.h"
#include "algo/all_gather/ring.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/selection.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardAllGather},
    {{"recursive_doubling", powerOfTwo}, recursiveDoublingAllGather},
    {{"bruck"}, bruckAllGather},
    {{"ring"}, ringAllGather},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// Bruck is recursive doubling's form for any group size.
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "recursive_doubling", 256 * 1024, kAnyRanks),
    rule(kInfo, "bruck", 256 * 1024, kAnyRanks),
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllGatherTable{core::CollectiveKind::kAllGather, kInfo, kRules};
extern const CollectiveTable kAllGatherVTable{core::CollectiveKind::kAllGatherV, kInfo, kRules};

void allGatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  int algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  kAlgorithms[algorithm].run(ctx, in, out, bytes, offsets);
}

}  // namespace comm::algo
