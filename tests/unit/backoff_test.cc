// Backoff's naps and the thread's timer slack: precise naps only where each
// rank has a core, and the caller's slack back once the wait ends.
#include <sys/prctl.h>

#include <chrono>

#include "common/backoff.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::core::Backoff;
using comm::core::coreForEachRank;

namespace {

// A slack no kernel default has, so that seeing it again proves it was restored.
constexpr unsigned long kCallersSlack = 77777;

long currentSlack() { return prctl(PR_GET_TIMERSLACK); }

// Pauses until `backoff` has spun and yielded past its first phases (the
// longest, with a core of its own, 1 ms), then once more: that pause naps.
void pauseUntilNapping(Backoff& backoff) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(1100)) backoff.pause();
  backoff.pause();
}

void ownCoreNapsNarrowTheSlackAndRestoreIt(void**) {
  assert_int_equal(prctl(PR_SET_TIMERSLACK, kCallersSlack), 0);
  coreForEachRank.store(true);
  {
    Backoff backoff;
    pauseUntilNapping(backoff);
    assert_int_equal(currentSlack(), 1000);
    backoff.reset();  // a wait that found work again still naps precisely
    pauseUntilNapping(backoff);
    assert_int_equal(currentSlack(), 1000);
  }
  assert_int_equal(currentSlack(), kCallersSlack);
}

void oversubscribedNodeKeepsTheSlack(void**) {
  assert_int_equal(prctl(PR_SET_TIMERSLACK, kCallersSlack), 0);
  coreForEachRank.store(false);
  {
    Backoff backoff;
    pauseUntilNapping(backoff);
    assert_int_equal(currentSlack(), kCallersSlack);
  }
  assert_int_equal(currentSlack(), kCallersSlack);
}

void shortWaitLeavesTheSlack(void**) {
  assert_int_equal(prctl(PR_SET_TIMERSLACK, kCallersSlack), 0);
  coreForEachRank.store(true);
  {
    Backoff backoff;
    // With a core of its own a waiter still yields 300 us in: no nap yet.
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(300)) backoff.pause();
    assert_int_equal(currentSlack(), kCallersSlack);
  }
  assert_int_equal(currentSlack(), kCallersSlack);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(ownCoreNapsNarrowTheSlackAndRestoreIt),
      cmocka_unit_test(oversubscribedNodeKeepsTheSlack),
      cmocka_unit_test(shortWaitLeavesTheSlack),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
