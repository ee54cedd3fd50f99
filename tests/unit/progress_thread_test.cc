// The background progress thread (core/progress_thread.h) survives a
// transport whose progress() throws: nothing escapes the thread (which
// would end the process), and it stops calling a transport in doubt.
#include <atomic>
#include <chrono>
#include <new>
#include <thread>

#include "common/deadline.h"
#include "core/progress_thread.h"
#include "transport/transport.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace std::chrono_literals;

class ThrowingTransport final : public comm::transport::Transport {
 public:
  std::vector<uint8_t> localAddress() const override { return {}; }
  void connect(int, const std::vector<comm::transport::PeerInfo>&) override {}
  void send(int, uint64_t, const void*, size_t, comm::transport::Request&) override {}
  void recv(int, uint64_t, void*, size_t, comm::transport::Request&) override {}
  void cancel(comm::transport::Request&) override {}
  bool progress() override {
    calls.fetch_add(1);
    throw std::bad_alloc();
  }
  std::string providerFor(int) const override { return "throwing"; }

  std::atomic<int> calls{0};
};

void anExceptionInProgressStaysInTheThread(void**) {
  ThrowingTransport transport;
  {
    comm::core::ProgressThread thread(transport);
    thread.operationStarted();
    comm::Deadline deadline(120s);
    while (transport.calls.load() == 0 && !deadline.expired()) std::this_thread::sleep_for(1ms);
    assert_true(transport.calls.load() > 0);
    // A thread that went on would call it again and again.
    std::this_thread::sleep_for(50ms);
    thread.operationFinished();
  }
  assert_int_equal(transport.calls.load(), 1);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(anExceptionInProgressStaysInTheThread),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
