// How a vector is cut into one block per rank (or per participant of a
// folded group): block i is elements [offsets[i], offsets[i] + counts[i]),
// the blocks back to back in order.
#pragma once

#include <cstddef>
#include <vector>

namespace comm::algo {

struct ElementBlocks {
  std::vector<size_t> counts;
  std::vector<size_t> offsets;  // offsets[parts] is the total, so [i, j) spans offsets[j] - offsets[i]

  static ElementBlocks fromCounts(const size_t* counts, int parts) {
    ElementBlocks b;
    b.counts.assign(counts, counts + parts);
    b.offsets.resize(parts + 1);
    for (int i = 0; i < parts; ++i) b.offsets[i + 1] = b.offsets[i] + counts[i];
    return b;
  }

  // `count` elements in `parts` blocks; the first count % parts get one more.
  static ElementBlocks even(size_t count, int parts) {
    std::vector<size_t> counts(parts, count / parts);
    for (size_t i = 0; i < count % parts; ++i) ++counts[i];
    return fromCounts(counts.data(), parts);
  }

  int parts() const { return static_cast<int>(counts.size()); }
  size_t total() const { return offsets.back(); }
  // Elements in blocks [first, last).
  size_t span(int first, int last) const { return offsets[last] - offsets[first]; }
};

}  // namespace comm::algo
