// comm::algo::barrier: the dispatch from the selection table to an algorithm.
#include <string_view>

#include "algo/barrier/dissemination.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection.h"

namespace comm::algo {

void barrier(CollectiveContext& ctx) {
  std::string_view algorithm = choose(ctx, 0);
  if (algorithm == "board") return boardBarrier(ctx);
  disseminationBarrier(ctx);
}

}  // namespace comm::algo
