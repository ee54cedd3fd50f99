// Every rank's block of a tensor split by rows along dim 0, as the rooted,
// gathered and scattered collectives and all_to_all_single cut their
// buffers: its size and offset in bytes and in elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/small_buffer.h"

namespace comm::api {

// Group sizes up to this keep their per-rank tables on the stack.
inline constexpr size_t kInlineRanks = 16;
template <typename T>
using PerRank = core::SmallBuffer<T, kInlineRanks>;

class Layout {
 public:
  // Every column is written by append() or fillEven() before it is read.
  explicit Layout(int size) : size_(size), columns_(4 * static_cast<size_t>(size), core::kForOverwrite) {}

  // `rowsPerRank` rows for every rank; hash 0.
  static Layout even(int size, int64_t rowsPerRank, int64_t rowElements, size_t elementSize) {
    Layout l(size);
    l.fillEven(rowsPerRank, rowElements, elementSize);
    return l;
  }

  // Every rank's block `rowsPerRank` rows; hash 0. No division or hashing
  // per rank: at 8 B this layout is a good part of a rooted collective's
  // call.
  void fillEven(int64_t rowsPerRank, int64_t rowElements, size_t elementSize) {
    const size_t elements = static_cast<size_t>(rowsPerRank) * static_cast<size_t>(rowElements);
    const size_t bytes = elements * elementSize;
    for (size_t r = 0; r < size_; ++r) setBlock(r, elements, bytes, r * bytes, r * elements);
    filled_ = size_;
    endBytes_ = size_ * bytes;
    totalRows_ = static_cast<int64_t>(size_) * rowsPerRank;
    hash_ = 0;
  }

  int size() const { return static_cast<int>(size_); }
  const size_t* bytes() const { return column(0); }
  const size_t* offsets() const { return column(1); }
  const size_t* elements() const { return column(2); }
  const size_t* elementOffsets() const { return column(3); }
  int64_t totalRows() const { return totalRows_; }
  // Tells layouts apart in the signature; 0 for even ones, which agree on the count alone.
  uint64_t hash() const { return hash_; }

  // Appends the next rank's block of `rows` rows.
  void append(int64_t rows, int64_t rowElements, size_t elementSize) {
    const size_t elements = static_cast<size_t>(rows) * static_cast<size_t>(rowElements);
    setBlock(filled_, elements, elements * elementSize, endBytes_, endBytes_ / elementSize);
    endBytes_ += elements * elementSize;
    totalRows_ += rows;
    hash_ = (hash_ ^ static_cast<uint64_t>(rows)) * 1099511628211ull;
    ++filled_;
  }

 private:
  size_t* column(int c) { return columns_.data() + static_cast<size_t>(c) * size_; }
  const size_t* column(int c) const { return columns_.data() + static_cast<size_t>(c) * size_; }
  // Rank `rank`'s block, in every column.
  void setBlock(size_t rank, size_t elements, size_t bytes, size_t byteOffset, size_t elementOffset) {
    column(0)[rank] = bytes;
    column(1)[rank] = byteOffset;
    column(2)[rank] = elements;
    column(3)[rank] = elementOffset;
  }

  size_t size_;
  core::SmallBuffer<size_t, 4 * kInlineRanks> columns_;
  size_t filled_ = 0;
  size_t endBytes_ = 0;
  int64_t totalRows_ = 0;
  uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace comm::api
