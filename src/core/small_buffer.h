// A fixed-length array held inline up to N elements and on the heap beyond:
// the per-rank tables of a collective at a typical group size cost no
// allocation, which at 8 B is a good part of the call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace comm::core {

// Tags the SmallBuffer constructor that leaves its elements uninitialised.
struct ForOverwrite {};
inline constexpr ForOverwrite kForOverwrite{};

template <typename T, size_t N>
class SmallBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "elements are copied as bytes");

 public:
  // `n` value-initialised elements.
  explicit SmallBuffer(size_t n) : size_(n) {
    if (n > N) heap_ = std::make_unique<T[]>(n);
    std::fill_n(data(), n, T{});
  }
  // `n` elements the caller writes before it reads them (no clearing).
  SmallBuffer(size_t n, ForOverwrite) : size_(n) {
    if (n > N) heap_ = std::make_unique_for_overwrite<T[]>(n);
  }
  SmallBuffer(const SmallBuffer& other) : size_(other.size_) {
    if (size_ > N) heap_ = std::make_unique_for_overwrite<T[]>(size_);
    std::copy_n(other.data(), size_, data());
  }
  SmallBuffer(SmallBuffer&& other) noexcept : size_(other.size_), heap_(std::move(other.heap_)) {
    if (!heap_) std::copy_n(other.inline_, size_, inline_);
  }
  SmallBuffer& operator=(const SmallBuffer&) = delete;
  SmallBuffer& operator=(SmallBuffer&&) = delete;

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  std::unique_ptr<T[]> heap_;
  T inline_[N];  // only the first size_ are initialised: no 8 x N-byte clearing per call
};

// Group sizes up to this keep their per-rank tables on the stack.
inline constexpr size_t kInlineRanks = 16;
template <typename T>
using PerRank = SmallBuffer<T, kInlineRanks>;

}  // namespace comm::core
