// comm::algo::allGatherV: the dispatch from the selection table to an
// algorithm; all_gather and all_gather_v share it and the algorithms.
#include <numeric>
#include <string_view>

#include "algo/all_gather/bruck.h"
#include "algo/all_gather/recursive_doubling.h"
#include "algo/all_gather/ring.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection.h"
#include "core/error.h"
#include "core/log.h"

namespace comm::algo {

void allGatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  int n = ctx.size();
  std::string_view algorithm = choose(ctx, std::accumulate(bytes, bytes + n, size_t{0}));
  if (algorithm == "board") return boardAllGather(ctx, in, out, bytes, offsets);
  if (algorithm == "recursive_doubling") {
    if ((n & (n - 1)) == 0) return recursiveDoublingAllGather(ctx, in, out, bytes, offsets);
    log::debug("recursive doubling needs a power-of-two group, not {} ranks: running bruck", n);
    algorithm = "bruck";
  }
  if (algorithm == "bruck") return bruckAllGather(ctx, in, out, bytes, offsets);
  if (algorithm == "ring") return ringAllGather(ctx, in, out, bytes, offsets);
  fail(COMM_ERR_INTERNAL, "all_gather has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
