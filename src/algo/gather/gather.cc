// comm::algo::gatherV: the dispatch from the selection table to an
// algorithm; gather and gather_v share it and the algorithms.
#include <numeric>
#include <string_view>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/gather/binomial.h"
#include "algo/gather/linear.h"
#include "algo/selection.h"
#include "core/error.h"

namespace comm::algo {

void gatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root) {
  std::string_view algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  if (algorithm == "board") return boardGather(ctx, in, out, bytes, offsets, root);
  if (algorithm == "binomial") return binomialGather(ctx, in, out, bytes, offsets, root);
  if (algorithm == "linear") return linearGather(ctx, in, out, bytes, offsets, root);
  fail(COMM_ERR_INTERNAL, "gather has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
