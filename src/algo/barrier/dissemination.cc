// Dissemination barrier (Hensgen, Finkel, Manber): in round k every rank
// signals rank + 2^k and waits for rank - 2^k. After ceil(log2 n) rounds every
// rank has heard, directly or not, from every other. Any group size.
// Cost: ceil(log2 n) * alpha.
#include "algo/barrier/dissemination.h"

namespace comm::algo {

void disseminationBarrier(CollectiveContext& ctx) {
  int n = ctx.size();
  int rank = ctx.rank();
  for (int distance = 1, round = 0; distance < n; distance *= 2, ++round) {
    ctx.send((rank + distance) % n, round, nullptr, 0);
    ctx.wait(ctx.recv((rank - distance + n) % n, round, nullptr, 0));
  }
}

}  // namespace comm::algo
