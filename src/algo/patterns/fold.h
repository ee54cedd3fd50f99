// The fold that lets recursive doubling and halving run on any group size.
// With n = p + extra ranks (p the largest power of two <= n), each pair
// (2i, 2i+1), i < extra, acts as one participant: the even rank hands its
// vector to the odd one first and gets its result back last, costing one
// more alpha + N beta each way. Participant i < extra is rank 2i+1 and
// carries ranks 2i and 2i+1; participant i >= extra is rank i + extra. The
// participants thus cover the ranks in order, so combining participants
// lower-first is combining ranks lower-first.
#pragma once

#include "algo/patterns/blocks.h"

namespace comm::algo {

class Fold {
 public:
  Fold(int size, int rank);

  int participants() const { return participants_; }
  // This rank's participant number; -1 when it hands its data over.
  int newRank() const { return newRank_; }
  bool handsOver() const { return newRank_ < 0; }
  // An odd rank of a pair, which carries its even partner's data too.
  bool carriesPartner() const { return partner_ >= 0 && newRank_ >= 0; }
  // The other rank of this rank's pair; -1 outside the pairs.
  int partner() const { return partner_; }

  // The rank that acts as participant `newRank`.
  int rankOf(int newRank) const { return newRank < extra_ ? 2 * newRank + 1 : newRank + extra_; }
  // The lowest rank whose data participant `newRank` carries.
  int firstRankOf(int newRank) const { return newRank < extra_ ? 2 * newRank : newRank + extra_; }

  // Per-rank blocks joined into per-participant blocks.
  Blocks participantBlocks(const Blocks& rankBlocks) const;

 private:
  int participants_;
  int extra_;
  int newRank_;
  int partner_ = -1;
};

}  // namespace comm::algo
