// Backoff's naps and the thread's timer slack: short naps only where the
// world allows them, and the caller's slack back once the wait ends.
#include <sys/prctl.h>

#include <chrono>

#include "core/backoff.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::core::Backoff;
using comm::core::preciseNaps;

namespace {

// A slack no kernel default has, so that seeing it again proves it was restored.
constexpr unsigned long kCallersSlack = 77777;

long currentSlack() { return prctl(PR_GET_TIMERSLACK); }

// Pauses until `backoff` has spun and yielded past its first phases, then
// once more: that pause naps.
void pauseUntilNapping(Backoff& backoff) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(80)) backoff.pause();
  backoff.pause();
}

void preciseNapsNarrowTheSlackAndRestoreIt(void**) {
  assert_int_equal(prctl(PR_SET_TIMERSLACK, kCallersSlack), 0);
  preciseNaps.store(true);
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
  preciseNaps.store(false);
  {
    Backoff backoff;
    pauseUntilNapping(backoff);
    assert_int_equal(currentSlack(), kCallersSlack);
  }
  assert_int_equal(currentSlack(), kCallersSlack);
}

void waitThatNeverNapsLeavesTheSlack(void**) {
  assert_int_equal(prctl(PR_SET_TIMERSLACK, kCallersSlack), 0);
  preciseNaps.store(true);
  {
    Backoff backoff;
    backoff.pause();  // still spinning
  }
  assert_int_equal(currentSlack(), kCallersSlack);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(preciseNapsNarrowTheSlackAndRestoreIt),
      cmocka_unit_test(oversubscribedNodeKeepsTheSlack),
      cmocka_unit_test(waitThatNeverNapsLeavesTheSlack),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
