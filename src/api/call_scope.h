// The communicators a C call is using. comm_destroy on one thread while
// another thread is inside a call on the same communicator must not free it
// under that call: each call pins the communicators it looks up
// (api::communicator) until it returns, and comm_destroy waits for the pins
// to go before it frees anything.
#pragma once

struct comm_communicator;

namespace comm::api {

// Lives for one C call (guard() makes it); releases the call's pins when
// the outermost one ends.
class CallScope {
 public:
  CallScope() noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Pins `c` until the current call returns.
  static void pin(comm_communicator* c);
};

}  // namespace comm::api
