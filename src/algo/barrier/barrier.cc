// comm::algo::barrier: the dispatch from the selection table to an algorithm.
#include "algo/barrier/dissemination.h"
#include "algo/collectives.h"
#include "algo/selection.h"

namespace comm::algo {

void barrier(CollectiveContext& ctx) {
  choose(ctx, 0);
  disseminationBarrier(ctx);
}

}  // namespace comm::algo
