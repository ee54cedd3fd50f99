// The blocks of a V-collective: rank r's block is bytes[r] bytes at
// offsets[r] of the full buffer. Trees rooted anywhere, rings and Bruck move
// the blocks of a range of ranks counted modulo the group size; blocks that
// lie back to back in the buffer travel as one message (a "run"), so an even
// layout costs one message per range, two where the range wraps past rank
// n-1, and empty blocks cost none.
//
// Sender and receiver derive the same runs from the same layout (every rank
// knows every rank's size), so the messages of a range match one to one.
#pragma once

#include <cstddef>

namespace comm::algo {

struct Run {
  size_t offset;  // in the full buffer
  size_t bytes;
};

class BlockLayout {
 public:
  BlockLayout(int size, const size_t* bytes, const size_t* offsets) : size_(size), bytes_(bytes), offsets_(offsets) {}

  // The blocks of ranks first, first+1, ... (count of them, modulo the size).
  size_t bytesOf(int first, int count) const {
    size_t total = 0;
    for (int i = 0; i < count; ++i) total += bytes_[(first + i) % size_];
    return total;
  }

  // Calls f(Run) for each non-empty run of adjacent blocks of those ranks, in rank order.
  template <typename F>
  void forEachRun(int first, int count, F&& f) const {
    Run run{0, 0};
    for (int i = 0; i < count; ++i) {
      int r = (first + i) % size_;
      if (bytes_[r] == 0) continue;
      if (run.bytes > 0 && offsets_[r] == run.offset + run.bytes) {
        run.bytes += bytes_[r];
        continue;
      }
      if (run.bytes > 0) f(run);
      run = {offsets_[r], bytes_[r]};
    }
    if (run.bytes > 0) f(run);
  }

 private:
  int size_;
  const size_t* bytes_;
  const size_t* offsets_;
};

}  // namespace comm::algo
