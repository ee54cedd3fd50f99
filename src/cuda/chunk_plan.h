// How a copy between device memory and pageable host memory moves through a
// few pinned host buffers: the chunks it is cut into, and the order of the
// steps that overlap the copy engine's work on one chunk with the CPU's on
// another. Pure host logic, unit-tested without a GPU (tests/unit/
// chunk_plan_test.cc); cuda/staging.cc carries the steps out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace comm::cuda {

struct Chunk {
  size_t offset = 0;
  size_t bytes = 0;
};

// `bytes` cut into chunks of `chunkBytes` rounded down to a multiple of
// `alignment` (at least `alignment`), the last one shorter, in order,
// covering every byte once. No chunk for 0 bytes.
std::vector<Chunk> planChunks(size_t bytes, size_t chunkBytes, size_t alignment);

enum class Direction { kToHost, kToDevice };

enum class StepKind : uint8_t {
  kFill,   // the CPU copies the chunk from pageable memory into its pinned slot (to device only)
  kIssue,  // the copy engine is given the chunk's copy between device and its pinned slot
  kAwait,  // wait until that copy is done
  kDrain,  // the CPU copies the chunk from its pinned slot to pageable memory (to host only)
};

struct Step {
  StepKind kind;
  uint32_t chunk;
  uint32_t slot;
};

// The steps for `chunks` chunks through `slots` pinned buffers (>= 1):
// every chunk passes Issue, Await and Drain (to host) or Fill, Issue and
// Await (to device) in that order; a slot is not refilled before the chunk
// that held it is through; and with two slots or more, chunk k + 1 is
// issued before the CPU works on chunk k, so the copy engine and the CPU
// work at once.
std::vector<Step> stagingSchedule(uint32_t chunks, uint32_t slots, Direction direction);

}  // namespace comm::cuda
