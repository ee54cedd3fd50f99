// comm::algo::gatherV: the dispatch from the selection table to an
// algorithm; gather and gather_v share it and the algorithms.
#include <numeric>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/gather/binomial.h"
#include "algo/gather/linear.h"
#include "algo/registry.h"
#include "algo/selection.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardGather},
    {{"binomial"}, binomialGather},
    {{"linear"}, linearGather},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
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
