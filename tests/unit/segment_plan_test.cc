// How a large device call staged through host memory is cut into parts and
// in which order the parts' copies and runs go (algo/device/staged_segments.h):
// pure host logic, so it is checked here without a GPU. The parts' messages
// among real ranks are checked by tests/multiproc/staged_segments_test.cc.
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algo/device/staged_segments.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using comm::algo::ByteRange;
using comm::algo::kStagedSegmentBytes;
using comm::algo::planSegments;
using comm::core::CollectiveContext;

constexpr size_t kMiB = size_t{1} << 20;

// The plan covers every byte once, in order, in whole elements.
void expectCovers(const std::vector<ByteRange>& plan, size_t bytes, size_t element) {
  assert_false(plan.empty());
  size_t next = 0;
  for (const ByteRange& part : plan) {
    assert_int_equal(part.offset, next);
    assert_true(part.bytes > 0 || bytes == 0);
    assert_int_equal(part.bytes % element, 0);
    next += part.bytes;
  }
  assert_int_equal(next, bytes);
}

void smallCallsAreOnePart(void**) {
  for (size_t bytes : {size_t{0}, size_t{8}, kMiB, kStagedSegmentBytes, 2 * kStagedSegmentBytes - 4}) {
    std::vector<ByteRange> plan = planSegments(bytes, 4);
    assert_int_equal(plan.size(), 1);
    assert_true(plan[0] == (ByteRange{0, bytes}));
  }
}

void largeCallsArePagesOfWholeElements(void**) {
  for (size_t element : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    for (size_t bytes : {2 * kStagedSegmentBytes, 12 * kMiB + 7 * 8, 64 * kMiB, 100 * kMiB + 24, size_t{1} << 34}) {
      bytes = bytes / element * element;
      std::vector<ByteRange> plan = planSegments(bytes, element);
      expectCovers(plan, bytes, element);
      assert_true(plan.size() >= 2);
      assert_true(plan.size() <= CollectiveContext::Segment::kMaxSegments);
      for (size_t k = 0; k + 1 < plan.size(); ++k) {
        assert_int_equal(plan[k].offset % 4096, 0);
        assert_true(plan[k].bytes >= kStagedSegmentBytes);
        assert_int_equal(plan[k].bytes, plan[0].bytes);
      }
      // The last part is nearly as large as the others (no tiny tail of its own).
      assert_true(plan.back().bytes * 2 >= plan[0].bytes);
    }
  }
}

void hugeCallsStopAtTheMostParts(void**) {
  std::vector<ByteRange> plan = planSegments(size_t{1} << 36, 4);
  assert_int_equal(plan.size(), CollectiveContext::Segment::kMaxSegments);
}

// Records the order of copies and runs as text.
class RecordingCopier : public comm::algo::SegmentCopier {
 public:
  explicit RecordingCopier(std::vector<std::string>& log) : log_(log) {}
  void startIn(ByteRange range) override { log_.push_back(fmt::format("in {}", range.offset)); }
  void awaitIn() override { log_.push_back("await in"); }
  void startOut(ByteRange range) override { log_.push_back(fmt::format("out {}", range.offset)); }
  void finishOut() override { log_.push_back("finish out"); }

 private:
  std::vector<std::string>& log_;
};

// Part k+1 starts in before part k runs (its copy overlaps the run), part k
// starts out right after it ran (its copy overlaps part k+1's run), and
// each part runs only once its input is in.
void copiesOverlapTheNeighbouringParts(void**) {
  const std::vector<ByteRange> plan = {{0, 10}, {10, 10}, {20, 5}};
  std::vector<std::string> log;
  RecordingCopier copier(log);
  comm::algo::pipelineSegments(plan, copier, [&](size_t index, ByteRange range) {
    log.push_back(fmt::format("run {} at {}", index, range.offset));
  });
  const std::vector<std::string> expected = {"in 0",        "await in", "in 10",       "run 0 at 0", "out 0",
                                             "await in",    "in 20",    "run 1 at 10", "out 10",     "await in",
                                             "run 2 at 20", "out 20",   "finish out"};
  if (log != expected) fail_msg("order: %s", fmt::format("{}", fmt::join(log, ", ")).c_str());
}

void onePartIsCopiedInRunAndCopiedOut(void**) {
  const std::vector<ByteRange> plan = {{0, 8}};
  std::vector<std::string> log;
  RecordingCopier copier(log);
  comm::algo::pipelineSegments(plan, copier, [&](size_t, ByteRange) { log.push_back("run"); });
  const std::vector<std::string> expected = {"in 0", "await in", "run", "out 0", "finish out"};
  assert_true(log == expected);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(smallCallsAreOnePart),
      cmocka_unit_test(largeCallsArePagesOfWholeElements),
      cmocka_unit_test(hugeCallsStopAtTheMostParts),
      cmocka_unit_test(copiesOverlapTheNeighbouringParts),
      cmocka_unit_test(onePartIsCopiedInRunAndCopiedOut),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
