#include "cuda/staging_layout.h"

#include <algorithm>

namespace comm::cuda {

void StagingLayout::add(const void* data, size_t bytes, uint8_t use) {
  regions_.push_back({static_cast<const char*>(data), bytes, use, 0});
}

size_t StagingLayout::arrange() {
  std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
  std::vector<Region> merged;
  for (const Region& r : regions_) {
    // An empty buffer has nothing to copy, and may start where another one
    // does (an empty block in place).
    if (r.bytes == 0) continue;
    if (!merged.empty() && r.begin < merged.back().begin + merged.back().bytes) {
      Region& m = merged.back();
      m.bytes = std::max(m.bytes, static_cast<size_t>(r.begin + r.bytes - m.begin));
      m.use |= r.use;
    } else {
      merged.push_back(r);
    }
  }
  size_t total = 0;
  for (Region& m : merged) {
    m.hostOffset = total;
    total += (m.bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  regions_ = std::move(merged);
  return total;
}

size_t StagingLayout::hostOffset(const void* data) const {
  auto* p = static_cast<const char*>(data);
  for (const Region& r : regions_) {
    if (p >= r.begin && p < r.begin + r.bytes) return r.hostOffset + static_cast<size_t>(p - r.begin);
  }
  return 0;
}

}  // namespace comm::cuda
