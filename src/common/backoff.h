// How a waiter that found nothing to do gives the CPU back: spin briefly
// (small-message latency), then yield (other ranks on the same core run),
// then sleep with growing naps (an idle rank costs nothing).
#pragma once

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <chrono>

#include "common/deadline.h"

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

// Whether this node has a core for each of its ranks; the world sets it. A
// waiter then keeps its core for up to kYieldOwnCore before it naps, and its
// naps last as long as it asks (Backoff::pause). With more ranks than
// cores, both would take the cores from the ranks with work (8 ranks on 2
// cores: precise naps alone already made collectives slower).
inline std::atomic<bool> coreForEachRank{false};

class Backoff {
 public:
  Backoff() = default;
  ~Backoff() {
    if (savedSlack_ >= 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(savedSlack_));
  }
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  void reset() { idleSince_ = {}; }

  // `busy`: bytes are moving that only polling moves (Transport::busy()),
  // so keep looking instead of sleeping: yield, and once the yield phase is
  // over, let `waitReady(limit)` block until the kernel has something for
  // the transport (a socket turned readable or writable) or `limit` passed.
  // It returns false when it cannot wait that way; the waiter then yields.
  // A transfer that the link, not the CPU, holds back (a slow network)
  // would otherwise keep every waiting rank in a loop of yields and failed
  // reads, taking the cores from the ranks and the network stack that move
  // the bytes.
  template <typename WaitReady>
  void pause(bool busy, WaitReady&& waitReady) {
    auto now = std::chrono::steady_clock::now();
    if (idleSince_ == std::chrono::steady_clock::time_point{}) idleSince_ = now;
    auto idle = now - idleSince_;
    if (idle < kSpin) return;
    const bool ownCore = coreForEachRank.load(std::memory_order_relaxed);
    if (idle < (ownCore ? kYieldOwnCore : kYield)) {
      sched_yield();
      return;
    }
    // Naps grow with the idle time, up to 1 ms.
    auto nap = std::chrono::duration_cast<std::chrono::microseconds>(idle) / 64;
    if (nap > kMaxNap) nap = kMaxNap;
    if (ownCore && savedSlack_ < 0) {
      // The kernel lets every sleep run over by the thread's timer slack,
      // 50 us unless set, which would make the first naps several times
      // as long as asked. The caller's slack comes back when the wait ends.
      savedSlack_ = prctl(PR_GET_TIMERSLACK);
      if (savedSlack_ >= 0) prctl(PR_SET_TIMERSLACK, kNapSlackNs);
    }
    if (busy) {
      if (!waitReady(nap)) sched_yield();
      return;
    }
    timespec ts{0, static_cast<long>(nap.count()) * 1000};
    nanosleep(&ts, nullptr);
  }
  void pause(bool busy = false) {
    pause(busy, [](std::chrono::microseconds) { return false; });
  }

 private:
  // Short phases: an answer from a peer running on a core of its own comes
  // within a spin this short, and a peer that shares the core cannot answer
  // until this rank yields, so a longer spin or yield only delays it. On an
  // oversubscribed node (8 ranks on 2 cores) longer phases made small
  // collectives several times slower; with free cores they made no
  // difference.
  static constexpr std::chrono::microseconds kSpin{2};
  static constexpr std::chrono::microseconds kYield{50};
  // With a core of its own a waiter takes nothing from other ranks by
  // keeping it, and a nap on a VM costs more than it saves: a sleep wakes
  // late and burns most of its time anyway. With a short yield a waiter
  // returned tens of microseconds after a peer that came a few hundred
  // microseconds late; with 1 ms it returns about as soon as Open MPI,
  // which never stops spinning (bench/late_peer.c, docs/performance.md
  // "Waiting for a late peer").
  static constexpr std::chrono::microseconds kYieldOwnCore{1000};
  static constexpr std::chrono::microseconds kMaxNap{1000};
  static constexpr unsigned long kNapSlackNs = 1000;
  std::chrono::steady_clock::time_point idleSince_{};
  long savedSlack_ = -1;  // the thread's timer slack before the first nap, -1 before it
};

// How often a waiter looks for dead peers and its deadline while idle:
// often enough that survivors learn of a death within milliseconds (the
// first step of a recovery, comm_shrink), and a look costs a signal probe
// per awaited peer on this node (commrun's record is read more rarely).
constexpr auto kHealthCheckInterval = std::chrono::milliseconds(10);

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
