// comm::algo::broadcast: the dispatch from the selection table to an algorithm.
#include <string_view>

#include "algo/broadcast/binomial.h"
#include "algo/broadcast/scatter_all_gather.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection.h"
#include "core/error.h"

namespace comm::algo {

void broadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  std::string_view algorithm = choose(ctx, bytes);
  if (algorithm == "board") return boardBroadcast(ctx, buffer, bytes, root);
  if (algorithm == "binomial") return binomialBroadcast(ctx, buffer, bytes, root);
  if (algorithm == "scatter_all_gather") return scatterAllGatherBroadcast(ctx, buffer, bytes, root);
  fail(COMM_ERR_INTERNAL, "broadcast has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
