// comm::algo::scatterV: the dispatch from the selection table to an
// algorithm; scatter and scatter_v share it and the algorithms.
#include <numeric>
#include <string_view>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/scatter/binomial.h"
#include "algo/scatter/linear.h"
#include "algo/selection.h"
#include "core/error.h"

namespace comm::algo {

void scatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
              int root) {
  std::string_view algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  if (algorithm == "board") return boardScatter(ctx, in, out, bytes, offsets, root);
  if (algorithm == "binomial") return binomialScatter(ctx, in, out, bytes, offsets, root);
  if (algorithm == "linear") return linearScatter(ctx, in, out, bytes, offsets, root);
  fail(COMM_ERR_INTERNAL, "scatter has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
