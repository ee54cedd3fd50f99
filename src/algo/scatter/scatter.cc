// comm::algo::scatterV: the dispatch from the selection table to an
// algorithm; scatter and scatter_v share it and the algorithms.
#include <numeric>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/scatter/binomial.h"
#include "algo/scatter/linear.h"
#include "algo/selection.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardScatter},
    {{"binomial"}, binomialScatter},
    {{"linear"}, linearScatter},
};
constexpr auto kInfo = infoOf(kAlgorithms);
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "binomial", 64 * 1024, kAnyRanks),
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
