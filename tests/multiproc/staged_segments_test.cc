// A large device call staged through host memory runs as parts whose
// copies overlap the neighbouring parts' messages (algo/device/staged_segments.h).
// Here real ranks run all_reduce, reduce and broadcast that way, with a
// copy engine of host threads standing in for the GPU's (each copy a little
// late, so a part that ran before its input was in, or a result read before
// it was out, shows), against references computed here. It drives the
// engine itself (core::Communicator), so it links comm_internal.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "algo/collectives.h"
#include "algo/device/staged_segments.h"
#include "api/objects.h"
#include "core/collective_context.h"
#include "core/signature.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using comm::algo::ByteRange;
using comm::core::CollectiveContext;
using comm::core::CollectiveKind;

comm_t* world = nullptr;
int rank = 0;
int size = 1;

// One direction of the stand-in copy engine: copies run in order on a
// thread of their own, each after a pause of 100 to 400 us.
class CopyEngine {
 public:
  CopyEngine() : random_(static_cast<unsigned>(rank) * 7919 + 1), thread_([this] { run(); }) {}
  ~CopyEngine() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void submit(void* to, const void* from, size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({to, from, bytes});
    }
    changed_.notify_all();
  }
  // Until every copy submitted is done.
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }

 private:
  struct Copy {
    void* to;
    const void* from;
    size_t bytes;
  };
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      Copy copy = queue_.front();
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(100 + random_() % 300));
      std::memcpy(copy.to, copy.from, copy.bytes);
      lock.lock();
      busy_ = false;
      changed_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Copy> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::minstd_rand random_;
  std::thread thread_;
};

// The caller's buffers `in` and `out` (either null where this rank has
// none) stand for device memory; `stagedIn` and `stagedOut` for the host
// memory the algorithm works on.
class ThreadCopier : public comm::algo::SegmentCopier {
 public:
  ThreadCopier(const char* in, char* stagedIn, char* out, const char* stagedOut)
      : in_(in), stagedIn_(stagedIn), out_(out), stagedOut_(stagedOut) {}
  void startIn(ByteRange r) override {
    if (in_ != nullptr) toHost_.submit(stagedIn_ + r.offset, in_ + r.offset, r.bytes);
  }
  void awaitIn() override { toHost_.drain(); }
  void startOut(ByteRange r) override {
    if (out_ != nullptr) toDevice_.submit(out_ + r.offset, stagedOut_ + r.offset, r.bytes);
  }
  void finishOut() override { toDevice_.drain(); }

 private:
  const char* in_;
  char* stagedIn_;
  char* out_;
  const char* stagedOut_;
  CopyEngine toHost_;
  CopyEngine toDevice_;
};

// Runs `body` as one collective with signature (kind, dtype, count, op, root).
void collective(CollectiveKind kind, comm_dtype_t dtype, size_t count, comm_op_t op, int root,
                const std::function<void(CollectiveContext&)>& body) {
  comm::core::Signature s;
  s.kind = static_cast<uint16_t>(kind);
  s.dtype = dtype;
  s.count = static_cast<int64_t>(count);
  s.op = op;
  s.root = root;
  comm::core::Communicator& c = *world->impl;
  auto operation = c.runCollective(
      [&](uint32_t sequence) {
        CollectiveContext ctx(c, sequence, s);
        body(ctx);
        ctx.finish();
      },
      false);
  assert_null(operation.get());
}

// Uneven parts, the last the smallest, the first a single element; and the
// plan a call of 9 MiB gets.
std::vector<std::vector<ByteRange>> plansFor(size_t count, size_t element) {
  const size_t bytes = count * element;
  const size_t third = bytes / 3 / element * element;
  return {{{0, element},
           {element, third},
           {element + third, bytes - element - third - element},
           {bytes - element, element}},
          comm::algo::planSegments(bytes, element)};
}

constexpr size_t kCount = (9 << 20) / 8 + 3;  // float32: two parts; float64: two parts
constexpr unsigned char kStale = 0xEE;        // what the host memory holds before a copy

float valueOf(int r, size_t i) { return static_cast<float>(r + 1) + static_cast<float>(i % 97) * 0.5f; }
int64_t integerOf(int r, size_t i) {
  return static_cast<int64_t>((i * 7919 + static_cast<size_t>(r) * 104729) % 1000003);
}

void allReduceInParts(void**) {
  for (bool inPlace : {false, true}) {
    for (const auto& plan : plansFor(kCount, sizeof(float))) {
      std::vector<float> in(kCount), out(kCount, -1.0f);
      for (size_t i = 0; i < kCount; ++i) in[i] = valueOf(rank, i);
      std::vector<float> stagedIn(kCount), stagedOut(kCount);
      std::memset(stagedIn.data(), kStale, kCount * sizeof(float));
      std::memset(stagedOut.data(), kStale, kCount * sizeof(float));
      float* deviceOut = inPlace ? in.data() : out.data();
      float* hostOut = inPlace ? stagedIn.data() : stagedOut.data();
      ThreadCopier copier(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(stagedIn.data()),
                          reinterpret_cast<char*>(deviceOut), reinterpret_cast<const char*>(hostOut));
      collective(CollectiveKind::kAllReduce, COMM_FLOAT32, kCount, COMM_OP_SUM, -1, [&](CollectiveContext& ctx) {
        comm::algo::runInSegments(ctx, copier, plan, [&](ByteRange part) {
          const size_t first = part.offset / sizeof(float);
          comm::algo::allReduce(ctx, stagedIn.data() + first, hostOut + first, part.bytes / sizeof(float), COMM_FLOAT32,
                                COMM_OP_SUM);
        });
      });
      for (size_t i = 0; i < kCount; ++i) {
        float expected = 0;
        for (int r = 0; r < size; ++r) expected += valueOf(r, i);
        if (deviceOut[i] != expected) {
          fail_msg("all_reduce in %zu parts (in place %d), element %zu: %g, expected %g", plan.size(), inPlace, i,
                   static_cast<double>(deviceOut[i]), static_cast<double>(expected));
        }
      }
    }
  }
  // int64 MAX, out of place, on the uneven plan.
  const size_t n = 100003;
  std::vector<int64_t> in(n), out(n, -1), stagedIn(n), stagedOut(n);
  for (size_t i = 0; i < n; ++i) in[i] = integerOf(rank, i);
  ThreadCopier copier(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(stagedIn.data()),
                      reinterpret_cast<char*>(out.data()), reinterpret_cast<const char*>(stagedOut.data()));
  collective(CollectiveKind::kAllReduce, COMM_INT64, n, COMM_OP_MAX, -1, [&](CollectiveContext& ctx) {
    comm::algo::runInSegments(ctx, copier, plansFor(n, 8)[0], [&](ByteRange part) {
      comm::algo::allReduce(ctx, stagedIn.data() + part.offset / 8, stagedOut.data() + part.offset / 8, part.bytes / 8,
                            COMM_INT64, COMM_OP_MAX);
    });
  });
  for (size_t i = 0; i < n; ++i) {
    int64_t expected = integerOf(0, i);
    for (int r = 1; r < size; ++r) expected = std::max(expected, integerOf(r, i));
    if (out[i] != expected)
      fail_msg("int64 max, element %zu: %lld, expected %lld", i, (long long)out[i], (long long)expected);
  }
}

void reduceInParts(void**) {
  for (int root : {0, size - 1}) {
    for (const auto& plan : plansFor(kCount, sizeof(float))) {
      std::vector<float> in(kCount), out(kCount, -1.0f), stagedIn(kCount), stagedOut(kCount);
      for (size_t i = 0; i < kCount; ++i) in[i] = valueOf(rank, i);
      std::memset(stagedIn.data(), kStale, kCount * sizeof(float));
      const bool isRoot = rank == root;
      ThreadCopier copier(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(stagedIn.data()),
                          isRoot ? reinterpret_cast<char*>(out.data()) : nullptr,
                          reinterpret_cast<const char*>(stagedOut.data()));
      collective(CollectiveKind::kReduce, COMM_FLOAT32, kCount, COMM_OP_SUM, root, [&](CollectiveContext& ctx) {
        comm::algo::runInSegments(ctx, copier, plan, [&](ByteRange part) {
          const size_t first = part.offset / sizeof(float);
          comm::algo::reduce(ctx, stagedIn.data() + first, isRoot ? stagedOut.data() + first : nullptr,
                             part.bytes / sizeof(float), COMM_FLOAT32, COMM_OP_SUM, root);
        });
      });
      if (!isRoot) continue;
      for (size_t i = 0; i < kCount; ++i) {
        float expected = 0;
        for (int r = 0; r < size; ++r) expected += valueOf(r, i);
        if (out[i] != expected) {
          fail_msg("reduce to %d in %zu parts, element %zu: %g, expected %g", root, plan.size(), i,
                   static_cast<double>(out[i]), static_cast<double>(expected));
        }
      }
    }
  }
}

void broadcastInParts(void**) {
  const size_t bytes = (9 << 20) + 5;
  for (int root : {0, size - 1}) {
    for (const auto& plan : plansFor(bytes, 1)) {
      std::vector<unsigned char> expected(bytes), data(bytes, 0), staged(bytes, kStale);
      for (size_t i = 0; i < bytes; ++i) expected[i] = static_cast<unsigned char>(i * 31 + (i >> 12) * 7 + root);
      const bool isRoot = rank == root;
      if (isRoot) data = expected;
      // The root only copies in, the others only copy out.
      ThreadCopier copier(
          isRoot ? reinterpret_cast<const char*>(data.data()) : nullptr, reinterpret_cast<char*>(staged.data()),
          isRoot ? nullptr : reinterpret_cast<char*>(data.data()), reinterpret_cast<const char*>(staged.data()));
      collective(CollectiveKind::kBroadcast, COMM_UINT8, bytes, COMM_OP_SUM, root, [&](CollectiveContext& ctx) {
        comm::algo::runInSegments(ctx, copier, plan, [&](ByteRange part) {
          comm::algo::broadcast(ctx, staged.data() + part.offset, part.bytes, root);
        });
      });
      if (data != expected) fail_msg("broadcast from %d in %zu parts: wrong bytes", root, plan.size());
    }
  }
}

}  // namespace

int main() {
  if (comm_init(&world, nullptr) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  comm_rank(&rank, world);
  comm_size(&size, world);
  const CMUnitTest tests[] = {
      cmocka_unit_test(allReduceInParts),
      cmocka_unit_test(reduceInParts),
      cmocka_unit_test(broadcastInParts),
  };
  int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
  comm_destroy(world);
  return failed;
}
