// cacheline_pingpong - how long one cache line takes to move between CPUs 0
// and 1 right now: two threads, pinned, take turns writing a counter the
// other waits for. This VM's vCPUs land on different host cores from
// session to session (and within one), and every small collective on the
// node board pays such transfers, so this number says which regime a run of
// 8 B collectives was measured in.
//
//   cmake -S . -B build -DCOMM_BUILD_PROBES=ON && cmake --build build --target comm-cacheline-pingpong
//   build/bench/probes/comm-cacheline-pingpong
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

alignas(128) std::atomic<long> ping{0};
alignas(128) std::atomic<long> pong{0};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace

int main() {
  constexpr long kRounds = 2'000'000;
  std::thread partner([] {
    pin(1);
    for (long i = 1; i <= kRounds; ++i) {
      while (ping.load(std::memory_order_acquire) != i) {
      }
      pong.store(i, std::memory_order_release);
    }
  });
  pin(0);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 1; i <= kRounds; ++i) {
    ping.store(i, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) != i) {
    }
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kRounds;
  partner.join();
  std::printf("cache line CPU 0 <-> 1: %.1f ns round trip, %.1f ns one way\n", ns, ns / 2);
  return 0;
}
