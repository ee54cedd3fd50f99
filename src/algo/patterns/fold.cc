#include "algo/patterns/fold.h"

#include <bit>

namespace comm::algo {

Fold::Fold(int size, int rank)
    : participants_(static_cast<int>(std::bit_floor(static_cast<unsigned>(size)))),
      extra_(size - participants_),
      newRank_(rank - extra_) {
  if (rank < 2 * extra_) {
    partner_ = rank ^ 1;
    newRank_ = rank % 2 == 1 ? rank / 2 : -1;
  }
}

Blocks Fold::participantBlocks(const Blocks& rankBlocks) const {
  Blocks blocks(participants_);
  for (int i = 0; i < participants_; ++i) blocks.append(rankBlocks.span(firstRankOf(i), rankOf(i) + 1));
  return blocks;
}

}  // namespace comm::algo
