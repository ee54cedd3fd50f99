// The communicators a C call is using. comm_destroy on one thread while
// another thread is inside a call on the same communicator must not free it
// under that call: each call pins the communicators it looks up
// (api::communicator) until it returns, and comm_destroy waits for the pins
// to go before it frees anything.
#pragma once

#include <array>
#include <cstddef>

struct comm_communicator;

namespace comm::api {

// One thread's calls in progress and their pins. A call looks up one
// communicator (comm_split and comm_group_create their parent); a few
// slots leave room.
struct CallPins {
  static constexpr size_t kMax = 4;
  int depth = 0;  // guard()s in progress on the thread
  size_t pinned = 0;
  std::array<comm_communicator*, kMax> pins{};
};

// Lives for one C call (guard() makes it); releases the call's pins when
// the outermost one ends. It finds the thread's pins once, on entry: every
// call pays for that lookup, and only calls that pinned anything pay more.
class CallScope {
 public:
  CallScope() noexcept : thread_(threadPins()) { ++thread_.depth; }
  ~CallScope() {
    if (--thread_.depth == 0 && thread_.pinned != 0) release(thread_);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Pins `c` until the current call returns.
  static void pin(comm_communicator* c);

 private:
  static CallPins& threadPins() noexcept;
  static void release(CallPins& pins);

  CallPins& thread_;
};

}  // namespace comm::api
