// A binomial tree over a group of n ranks rooted at any rank. Ranks are
// renumbered relative to the root (vrank = (rank - root) mod n) so the tree
// has one shape for every root: vrank v's parent is v with its lowest set bit
// cleared, its children are v + 2^j for every 2^j below that bit (every
// 2^j < n for the root) that is still < n, and its subtree is the vranks
// [v, v + span(v)). The depth is ceil(log2 n). Because a subtree is a range
// of vranks, it is a range of real ranks modulo n: see algo/patterns/blocks.h.
#pragma once

namespace comm::algo {

class BinomialTree {
 public:
  BinomialTree(int size, int rank, int root) : size_(size), root_(root), vrank_((rank - root + size) % size) {}

  int vrank() const { return vrank_; }
  bool isRoot() const { return vrank_ == 0; }
  int rankOf(int vrank) const { return (vrank + root_) % size_; }
  int parent() const { return rankOf(vrank_ - lowestBit(vrank_)); }
  // How many vranks the subtree of `vrank` holds, itself included.
  int span(int vrank) const { return vrank + lowestBit(vrank) < size_ ? lowestBit(vrank) : size_ - vrank; }
  int span() const { return span(vrank_); }

  // f(child vrank) for each child, the largest subtree first (it is the deepest).
  template <typename F>
  void forEachChild(F&& f) const {
    for (int distance = lowestBit(vrank_) / 2; distance >= 1; distance /= 2) {
      if (vrank_ + distance < size_) f(vrank_ + distance);
    }
  }

 private:
  // The root's "lowest bit" is the power of two that covers the whole group.
  int lowestBit(int vrank) const {
    if (vrank != 0) return vrank & -vrank;
    int bit = 1;
    while (bit < size_) bit *= 2;
    return bit;
  }

  int size_;
  int root_;
  int vrank_;
};

}  // namespace comm::algo
