// The pure-host logic of CUDA staging (cuda/chunk_plan.h), without a GPU:
// chunks cover every byte once, aligned; the staging schedule puts every
// chunk through its steps in order, never refills a slot still in use, and
// overlaps the copy engine's work with the CPU's.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "cuda/chunk_plan.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::cuda::Chunk;
using comm::cuda::Direction;
using comm::cuda::planChunks;
using comm::cuda::stagingSchedule;
using comm::cuda::Step;
using comm::cuda::StepKind;

namespace {

void chunks_cover_every_byte_once(void**) {
  const size_t sizes[] = {
      0, 1, 7, 255, 256, 257, 4096, (size_t{4} << 20) - 1, size_t{4} << 20, (size_t{4} << 20) + 1, size_t{64} << 20};
  for (size_t bytes : sizes) {
    for (size_t chunkBytes : {size_t{256}, size_t{1000}, size_t{4} << 20}) {
      for (size_t alignment : {size_t{1}, size_t{4}, size_t{256}}) {
        std::vector<Chunk> chunks = planChunks(bytes, chunkBytes, alignment);
        size_t next = 0;
        for (size_t k = 0; k < chunks.size(); ++k) {
          assert_int_equal(chunks[k].offset, next);
          assert_true(chunks[k].bytes > 0);
          assert_true(chunks[k].bytes <= std::max(chunkBytes, alignment));
          if (k + 1 < chunks.size()) assert_int_equal(chunks[k].bytes % alignment, 0);
          next += chunks[k].bytes;
        }
        assert_int_equal(next, bytes);
        if (bytes == 0) assert_true(chunks.empty());
      }
    }
  }
  // A chunk size below the alignment still makes progress: one alignment a chunk.
  assert_int_equal(planChunks(1024, 100, 256).size(), 4);
}

// Replays `steps` and checks the rules of stagingSchedule.
void checkSchedule(const std::vector<Step>& steps, uint32_t chunks, uint32_t slots, Direction direction) {
  const bool toHost = direction == Direction::kToHost;
  // The stages every chunk goes through, in order.
  const std::vector<StepKind> stages = toHost ? std::vector{StepKind::kIssue, StepKind::kAwait, StepKind::kDrain}
                                              : std::vector{StepKind::kFill, StepKind::kIssue, StepKind::kAwait};
  std::vector<size_t> progress(chunks, 0);
  std::vector<int64_t> holder(slots, -1);  // the chunk a slot holds, -1 when free
  uint32_t inFlight = 0, maxInFlight = 0;
  std::vector<size_t> issuedAt(chunks), cpuAt(chunks);
  for (size_t at = 0; at < steps.size(); ++at) {
    const Step& s = steps[at];
    assert_true(s.chunk < chunks);
    assert_int_equal(s.slot, s.chunk % slots);
    assert_true(progress[s.chunk] < stages.size());
    assert_int_equal(static_cast<int>(s.kind), static_cast<int>(stages[progress[s.chunk]]));
    if (progress[s.chunk] == 0) {
      // The chunk takes its slot: it must be free.
      assert_int_equal(holder[s.slot], -1);
      holder[s.slot] = s.chunk;
      maxInFlight = std::max(maxInFlight, ++inFlight);
    }
    if (s.kind == StepKind::kIssue) issuedAt[s.chunk] = at;
    if (s.kind == StepKind::kDrain || s.kind == StepKind::kFill) cpuAt[s.chunk] = at;
    if (++progress[s.chunk] == stages.size()) {
      holder[s.slot] = -1;
      --inFlight;
    }
  }
  for (uint32_t k = 0; k < chunks; ++k) assert_int_equal(progress[k], stages.size());
  assert_true(maxInFlight <= slots);
  // The overlap: the copy engine has chunk k + 1 before the CPU drains chunk
  // k (to host), or the CPU fills chunk k + 1 while the engine has chunk k
  // (to device: filled before chunk k is awaited).
  if (slots >= 2) {
    for (uint32_t k = 0; k + 1 < chunks; ++k) {
      if (toHost) assert_true(issuedAt[k + 1] < cpuAt[k]);
      else assert_true(cpuAt[k + 1] > issuedAt[k] && cpuAt[k + 1] < issuedAt[k + 1]);
    }
  }
}

void schedules_keep_their_rules(void**) {
  for (uint32_t chunks : {0u, 1u, 2u, 3u, 4u, 7u, 16u}) {
    for (uint32_t slots : {1u, 2u, 3u, 5u}) {
      for (Direction d : {Direction::kToHost, Direction::kToDevice}) {
        checkSchedule(stagingSchedule(chunks, slots, d), chunks, slots, d);
      }
    }
  }
}

void schedule_reads_as_expected(void**) {
  // To host through two slots: the engine copies chunk 1 while the CPU
  // drains chunk 0.
  std::vector<Step> steps = stagingSchedule(3, 2, Direction::kToHost);
  const std::vector<std::pair<StepKind, uint32_t>> expected = {
      {StepKind::kIssue, 0}, {StepKind::kIssue, 1}, {StepKind::kAwait, 0}, {StepKind::kDrain, 0}, {StepKind::kIssue, 2},
      {StepKind::kAwait, 1}, {StepKind::kDrain, 1}, {StepKind::kAwait, 2}, {StepKind::kDrain, 2}};
  assert_int_equal(steps.size(), expected.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    assert_int_equal(static_cast<int>(steps[i].kind), static_cast<int>(expected[i].first));
    assert_int_equal(steps[i].chunk, expected[i].second);
  }
}

void bad_plans_are_internal_errors(void**) {
  for (auto call : {+[] { planChunks(10, 4, 0); }, +[] { stagingSchedule(3, 0, Direction::kToHost); }}) {
    try {
      call();
      fail_msg("expected a comm::Error");
    } catch (const comm::Error& e) {
      assert_int_equal(e.status(), COMM_ERR_INTERNAL);
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chunks_cover_every_byte_once),
      cmocka_unit_test(schedules_keep_their_rules),
      cmocka_unit_test(schedule_reads_as_expected),
      cmocka_unit_test(bad_plans_are_internal_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
