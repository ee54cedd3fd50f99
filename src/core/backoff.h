// How a waiter that found nothing to do gives the CPU back: spin briefly
// (small-message latency), then yield (other ranks on the same core run),
// then sleep with growing naps (an idle rank costs nothing).
#pragma once

#include <sched.h>
#include <time.h>

#include <chrono>

#include "core/deadline.h"

namespace comm::core {

// Tells the core this thread is spinning (cheaper for a sibling hyperthread,
// and the loop does not flood the memory system with reads).
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class Backoff {
 public:
  void reset() { idleSince_ = {}; }

  // `busy`: bytes are moving that only polling moves (Transport::busy()), so
  // yield instead of sleeping.
  void pause(bool busy = false) {
    auto now = std::chrono::steady_clock::now();
    if (idleSince_ == std::chrono::steady_clock::time_point{}) idleSince_ = now;
    auto idle = now - idleSince_;
    if (idle < kSpin) return;
    if (idle < kYield || busy) {
      sched_yield();
      return;
    }
    // Naps grow with the idle time, up to 1 ms.
    auto nap = std::chrono::duration_cast<std::chrono::microseconds>(idle) / 64;
    if (nap > kMaxNap) nap = kMaxNap;
    timespec ts{0, static_cast<long>(nap.count()) * 1000};
    nanosleep(&ts, nullptr);
  }

 private:
  // Short phases: an answer from a peer running on a core of its own comes
  // within 2 us, and a peer that shares the core cannot answer until this
  // rank yields. Measured on 2 cores (load average ~10): all_reduce of 8 B
  // at 8 ranks took 60-150 us per call with 2 us / 50 us, 200-1000 us with
  // 20 us / 300 us; at 2 ranks both gave 2 us when the cores were free, and
  // the short spin 10-14 us instead of 40-50 us when they were not.
  static constexpr std::chrono::microseconds kSpin{2};
  static constexpr std::chrono::microseconds kYield{50};
  static constexpr std::chrono::microseconds kMaxNap{1000};
  std::chrono::steady_clock::time_point idleSince_{};
};

// How often a waiter looks for dead peers and its deadline while idle.
constexpr auto kHealthCheckInterval = std::chrono::milliseconds(200);

// Waits until `ready()`: between looks `work()` moves what it can (true when
// it did something, which resets the backoff), and every
// kHealthCheckInterval `check()` throws if the wait should give up.
template <typename Ready, typename Work, typename Check>
void waitUntil(Ready ready, Work work, Check check) {
  Backoff backoff;
  auto nextCheck = Clock::now() + kHealthCheckInterval;
  while (!ready()) {
    if (work()) {
      backoff.reset();
      continue;
    }
    const auto now = Clock::now();
    if (now >= nextCheck) {
      nextCheck = now + kHealthCheckInterval;
      check();
    }
    backoff.pause();
  }
}

}  // namespace comm::core
