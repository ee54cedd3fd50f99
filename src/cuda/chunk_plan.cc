#include "cuda/chunk_plan.h"

#include <algorithm>

#include "common/error.h"

namespace comm::cuda {

std::vector<Chunk> planChunks(size_t bytes, size_t chunkBytes, size_t alignment) {
  if (alignment == 0) fail(COMM_ERR_INTERNAL, "planChunks: alignment 0");
  // Aligned chunk starts keep the copy engine on its fast path, and a chunk
  // aligned to the element size never splits an element for a reduction.
  const size_t step = std::max(alignment, chunkBytes / alignment * alignment);
  std::vector<Chunk> chunks;
  chunks.reserve((bytes + step - 1) / step);
  for (size_t offset = 0; offset < bytes; offset += step) chunks.push_back({offset, std::min(step, bytes - offset)});
  return chunks;
}

std::vector<Step> stagingSchedule(uint32_t chunks, uint32_t slots, Direction direction) {
  if (slots == 0) fail(COMM_ERR_INTERNAL, "stagingSchedule: no pinned slot");
  std::vector<Step> steps;
  steps.reserve(3 * static_cast<size_t>(chunks));
  const bool toHost = direction == Direction::kToHost;
  // The CPU's part of chunk k comes after chunk k + 1 is issued (to host) or
  // before chunk k is issued (to device): either way a slot becomes free for
  // chunk k + slots only once chunk k is through.
  auto finish = [&](uint32_t k) {
    steps.push_back({StepKind::kAwait, k, k % slots});
    if (toHost) steps.push_back({StepKind::kDrain, k, k % slots});
  };
  for (uint32_t k = 0; k < chunks; ++k) {
    if (k >= slots) finish(k - slots);
    if (!toHost) steps.push_back({StepKind::kFill, k, k % slots});
    steps.push_back({StepKind::kIssue, k, k % slots});
  }
  for (uint32_t k = chunks > slots ? chunks - slots : 0; k < chunks; ++k) finish(k);
  return steps;
}

}  // namespace comm::cuda
