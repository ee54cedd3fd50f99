#include "algo/device/staged_segments.h"

#include <algorithm>
#include <numeric>

#include "algo/patterns/phase_steps.h"
#include "core/communicator.h"
#include "cuda/staging.h"

namespace comm::algo {

static_assert(3 * kPhaseSteps <= CollectiveContext::Segment::kSegmentSteps,
              "a part's steps must hold every phase of a hierarchical algorithm");

namespace {

// Parts start on page boundaries of the host memory (and whole elements),
// where the reductions' and copies' wide loads start aligned.
constexpr size_t kPartAlignment = 4096;

// The copies of a device call staged by a cuda::Staging, for rank buffers
// `in` and `out` (either may be null: nothing to copy that way). Each wait
// has the communicator's timeout, as each wait of the algorithms has.
class StagingCopier : public SegmentCopier {
 public:
  StagingCopier(cuda::Staging& staging, const void* in, void* out, const core::Communicator& comm)
      : staging_(staging), in_(static_cast<const char*>(in)), out_(static_cast<char*>(out)), comm_(comm) {}

  void startIn(ByteRange range) override {
    if (in_ != nullptr) staging_.startToHost(in_ + range.offset, range.bytes);
  }
  void awaitIn() override {
    if (in_ != nullptr) staging_.awaitToHost(comm_.deadline());
  }
  void startOut(ByteRange range) override {
    if (out_ != nullptr) staging_.startToDevice(out_ + range.offset, range.bytes);
  }
  void finishOut() override { staging_.finishToDevice(comm_.deadline()); }

 private:
  cuda::Staging& staging_;
  const char* in_;
  char* out_;
  const core::Communicator& comm_;
};

}  // namespace

std::vector<ByteRange> planSegments(size_t bytes, size_t elementSize) {
  const size_t parts = std::clamp<size_t>(bytes / kStagedSegmentBytes, 1, CollectiveContext::Segment::kMaxSegments);
  if (parts == 1) return {{0, bytes}};
  const size_t granule = std::lcm(elementSize, kPartAlignment);
  const size_t partBytes = ((bytes + parts - 1) / parts + granule - 1) / granule * granule;
  std::vector<ByteRange> plan;
  for (size_t offset = 0; offset < bytes; offset += partBytes) {
    plan.push_back({offset, std::min(partBytes, bytes - offset)});
  }
  return plan;
}

void pipelineSegments(std::span<const ByteRange> segments, SegmentCopier& copier,
                      const std::function<void(size_t index, ByteRange range)>& part) {
  if (segments.empty()) return;
  copier.startIn(segments[0]);
  for (size_t k = 0; k < segments.size(); ++k) {
    copier.awaitIn();
    if (k + 1 < segments.size()) copier.startIn(segments[k + 1]);
    part(k, segments[k]);
    copier.startOut(segments[k]);
  }
  copier.finishOut();
}

void runInSegments(CollectiveContext& ctx, SegmentCopier& copier, std::span<const ByteRange> plan,
                   const std::function<void(ByteRange range)>& part) {
  pipelineSegments(plan, copier, [&](size_t index, ByteRange range) {
    CollectiveContext::Segment segment(ctx, index);
    part(range);
  });
}

void runStaged(CollectiveContext& ctx, cuda::Staging& staging, const void* deviceIn, void* deviceOut, size_t bytes,
               size_t elementSize, const std::function<void(ByteRange range)>& part) {
  const std::vector<ByteRange> plan = planSegments(bytes, elementSize);
  if (plan.size() > 1) {
    StagingCopier copier(staging, deviceIn, deviceOut, ctx.communicator());
    runInSegments(ctx, copier, plan, part);
    return;
  }
  staging.toHost(ctx.communicator().deadline());
  part({0, bytes});
  staging.toDevice(ctx.communicator().deadline());
}

}  // namespace comm::algo
