// Where a call's device buffers lie in the host memory that stands for them
// (cuda/staging.h). Buffers that overlap (in place, or a rank's block inside
// its output) become one region and share host memory as they share device
// memory; each region starts on a kAlignment boundary. Pure host logic,
// built with or without CUDA and unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace comm::cuda {

class StagingLayout {
 public:
  static constexpr size_t kAlignment = 256;

  struct Region {
    const char* begin;  // device address
    size_t bytes;
    uint8_t use;        // Staging::Use bits of every buffer in it
    size_t hostOffset;  // where its bytes lie in the host memory
  };

  // A device buffer and what the call does with it (Staging::Use bits).
  // Before arrange().
  void add(const void* data, size_t bytes, uint8_t use);
  // Merges overlapping buffers into regions in address order and places
  // them; returns the host bytes they take. After the last add().
  size_t arrange();
  const std::vector<Region>& regions() const { return regions_; }
  // Where `data`, the start of a buffer added or an address inside one,
  // lies in the host memory. An empty buffer is in no region: nothing reads
  // or writes through it, and it gets offset 0.
  size_t hostOffset(const void* data) const;

 private:
  std::vector<Region> regions_;
};

}  // namespace comm::cuda
