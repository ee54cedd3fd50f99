// A buffer that is not aligned to its element size (a numpy view at an odd
// byte offset is one) cannot be read as an array of that type: the kernels'
// typed loads would be undefined, and a vectorised loop that peels to
// alignment can fault on it. Such calls run the kernels on aligned copies,
// a block at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace comm::reduce {

inline bool alignedTo(size_t elementSize, std::initializer_list<const void*> pointers) {
  for (const void* p : pointers) {
    if (reinterpret_cast<uintptr_t>(p) % elementSize != 0) return false;
  }
  return true;
}

// For each block of `count` elements of `elementSize` bytes: copies the
// block of every input into aligned storage, calls kernel(blocks, elements)
// and copies blocks[0] to `out` (which may be an input exactly).
template <size_t Inputs, class Kernel>
void throughAlignedBlocks(void* out, const std::array<const void*, Inputs>& inputs, size_t count, size_t elementSize,
                          Kernel&& kernel) {
  constexpr size_t kBlockBytes = 4096;
  alignas(64) unsigned char blocks[Inputs][kBlockBytes];
  const size_t perBlock = kBlockBytes / elementSize;
  for (size_t done = 0; done < count; done += perBlock) {
    const size_t elements = std::min(perBlock, count - done);
    const size_t at = done * elementSize;
    for (size_t i = 0; i < Inputs; ++i) {
      std::memcpy(blocks[i], static_cast<const unsigned char*>(inputs[i]) + at, elements * elementSize);
    }
    kernel(blocks, elements);
    std::memcpy(static_cast<unsigned char*>(out) + at, blocks[0], elements * elementSize);
  }
}

}  // namespace comm::reduce
