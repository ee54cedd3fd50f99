// Collectives on device memory that stage through host memory
// (cuda/staging.h) run in parts when they are large, so that the copies
// overlap the messages: while the host algorithm works on part k, the copy
// engines bring part k+1 to the host and take part k-1 back to the device.
// Staged whole, a call would copy all its input before its first message
// and all its output after its last. Only for collectives whose elements
// are independent (all_reduce, reduce, broadcast): each part is the same
// collective on a slice of the elements, its messages kept apart from the
// other parts' by a CollectiveContext::Segment.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "core/collective_context.h"

namespace comm::cuda {
class Staging;
}

namespace comm::algo {

using core::CollectiveContext;

// The smallest part: large enough that a part's own start (its first
// messages' latency, its algorithm's steps) is small next to moving its
// bytes, small enough that the first copy in and the last copy out, which
// nothing overlaps, are short.
constexpr size_t kStagedSegmentBytes = size_t{4} << 20;

struct ByteRange {
  size_t offset = 0;
  size_t bytes = 0;
  bool operator==(const ByteRange&) const = default;
};

// The parts of `bytes` (a multiple of `elementSize`): whole elements, in
// order, as even as whole elements allow, each at least kStagedSegmentBytes
// (so a call under twice that is one part), and at most
// CollectiveContext::Segment::kMaxSegments of them.
std::vector<ByteRange> planSegments(size_t bytes, size_t elementSize);

// What moves parts of a call's buffers between the caller's memory and the
// host memory its algorithm works on. Offsets are in bytes from the start
// of the call's input and output.
class SegmentCopier {
 public:
  virtual ~SegmentCopier() = default;
  // Starts copying part `range` of the input to the host; returns at once.
  virtual void startIn(ByteRange range) = 0;
  // Waits until the part last started in is on the host.
  virtual void awaitIn() = 0;
  // Starts copying part `range` of the output back, behind the parts
  // started before; returns at once.
  virtual void startOut(ByteRange range) = 0;
  // Waits until every part started out is back.
  virtual void finishOut() = 0;
};

// Runs `part(index, range)` for each of `segments`, in order, between their
// copies: part k+1 starts in before part k runs, and part k starts out as
// soon as it has run. Every part started out is back when it returns.
void pipelineSegments(std::span<const ByteRange> segments, SegmentCopier& copier,
                      const std::function<void(size_t index, ByteRange range)>& part);

// A collective run as the parts of `plan` (planSegments) on `ctx`:
// `part(range)` runs the collective on the host memory standing for that
// range of the input and output, within the part's own Segment.
void runInSegments(CollectiveContext& ctx, SegmentCopier& copier, std::span<const ByteRange> plan,
                   const std::function<void(ByteRange range)>& part);

// A device call of `bytes` staged by `staging`: in parts through
// runInSegments where planSegments makes more than one, else copied in
// whole, run, copied back. `deviceIn` (read) and `deviceOut` (written) are
// the call's device buffers, either null where this rank has none (a
// broadcast's root only sends, the other ranks only receive).
void runStaged(CollectiveContext& ctx, cuda::Staging& staging, const void* deviceIn, void* deviceOut, size_t bytes,
               size_t elementSize, const std::function<void(ByteRange range)>& part);

}  // namespace comm::algo
