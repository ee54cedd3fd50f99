// How a buffer is cut into one block per rank (or per participant of a
// folded group): block i is counts()[i] units at offsets()[i], in one unit
// throughout (rows, elements or bytes, as the holder says). The API keeps a
// V collective's blocks in rows and hands the algorithms bytes or elements
// (scaled); reduce_scatter and all_reduce cut their vectors in elements.
//
// Trees rooted anywhere, rings and Bruck move the blocks of a range of
// ranks counted modulo the group size; blocks that lie back to back in the
// buffer travel as one message (a "run"), so an even cut costs one message
// per range, two where the range wraps past rank n-1, and empty blocks cost
// none. Sender and receiver derive the same runs from the same blocks
// (every rank knows every rank's size), so the messages of a range match
// one to one. The algorithms of the V collectives take their blocks as two
// arrays (bytes, offsets), which may lie apart: the run walk reads those.
#pragma once

#include <cstddef>

#include "core/small_buffer.h"

namespace comm::algo {

class Blocks {
 public:
  // Blocks of adjacent parts that lie back to back: one message.
  struct Run {
    size_t offset;  // in the whole buffer
    size_t count;
  };

  // `parts` blocks for append() to fill in order.
  explicit Blocks(int parts) : parts_(static_cast<size_t>(parts)), cells_(2 * parts_ + 1, core::kForOverwrite) {
    offsetsData()[0] = 0;
  }

  // The blocks of `counts`, back to back in order.
  static Blocks fromCounts(const size_t* counts, int parts) {
    Blocks b(parts);
    for (int i = 0; i < parts; ++i) b.append(counts[i]);
    return b;
  }

  // `total` units in `parts` blocks; the first total % parts get one more.
  static Blocks even(size_t total, int parts) {
    Blocks b(parts);
    const size_t each = total / static_cast<size_t>(parts);
    const size_t longer = total % static_cast<size_t>(parts);
    for (size_t i = 0; i < b.parts_; ++i) b.append(each + (i < longer ? 1 : 0));
    return b;
  }

  // `parts` blocks of `each` units.
  static Blocks uniform(int parts, size_t each) {
    Blocks b(parts);
    b.fillUniform(each);
    return b;
  }

  // Every block `each` units. No division per block: at 8 B building the
  // blocks is a good part of a rooted collective's call.
  void fillUniform(size_t each) {
    size_t* counts = countsData();
    size_t* offsets = offsetsData();
    for (size_t i = 0; i < parts_; ++i) {
      counts[i] = each;
      offsets[i + 1] = (i + 1) * each;
    }
    filled_ = parts_;
  }

  // Appends the next block, right after the last.
  void append(size_t count) {
    size_t* offsets = offsetsData();
    countsData()[filled_] = count;
    offsets[filled_ + 1] = offsets[filled_] + count;
    ++filled_;
  }

  // These blocks with every count and offset `unit` times as large (rows
  // to elements or bytes).
  Blocks scaled(size_t unit) const {
    Blocks b(parts());
    const size_t cells = 2 * parts_ + 1;
    const size_t* from = cells_.data();
    size_t* to = b.cells_.data();
    for (size_t i = 0; i < cells; ++i) to[i] = from[i] * unit;
    b.filled_ = filled_;
    return b;
  }

  int parts() const { return static_cast<int>(parts_); }
  const size_t* counts() const { return cells_.data(); }
  // parts() + 1 entries: offsets()[parts()] is the total, so blocks [i, j)
  // span offsets()[j] - offsets()[i].
  const size_t* offsets() const { return cells_.data() + parts_; }
  size_t total() const { return offsets()[parts_]; }
  // Units in blocks [first, last).
  size_t span(int first, int last) const { return offsets()[last] - offsets()[first]; }

  // The units of blocks first, first+1, ... (count of them, modulo `parts`)
  // of the blocks given as arrays.
  static size_t countOf(int parts, const size_t* counts, int first, int count) {
    size_t total = 0;
    for (int i = 0; i < count; ++i) total += counts[(first + i) % parts];
    return total;
  }

  // Calls f(Run) for each non-empty run of adjacent blocks of those parts,
  // in order.
  template <typename F>
  static void forEachRun(int parts, const size_t* counts, const size_t* offsets, int first, int count, F&& f) {
    Run run{0, 0};
    for (int i = 0; i < count; ++i) {
      const int p = (first + i) % parts;
      if (counts[p] == 0) continue;
      if (run.count > 0 && offsets[p] == run.offset + run.count) {
        run.count += counts[p];
        continue;
      }
      if (run.count > 0) f(run);
      run = {offsets[p], counts[p]};
    }
    if (run.count > 0) f(run);
  }

 private:
  size_t* countsData() { return cells_.data(); }
  size_t* offsetsData() { return cells_.data() + parts_; }

  size_t parts_;
  // counts, then offsets: every one written before it is read.
  core::SmallBuffer<size_t, 2 * core::kInlineRanks + 1> cells_;
  size_t filled_ = 0;  // blocks append() has written
};

}  // namespace comm::algo
