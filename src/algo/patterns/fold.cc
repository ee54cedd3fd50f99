#include "algo/patterns/fold.h"

#include <bit>
#include <vector>

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

ElementBlocks Fold::participantBlocks(const ElementBlocks& rankBlocks) const {
  std::vector<size_t> counts(participants_);
  for (int i = 0; i < participants_; ++i) counts[i] = rankBlocks.span(firstRankOf(i), rankOf(i) + 1);
  return ElementBlocks::fromCounts(counts.data(), participants_);
}

}  // namespace comm::algo
