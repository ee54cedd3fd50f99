#include "api/call_scope.h"

#include "api/objects.h"
#include "common/error.h"

namespace comm::api {

CallPins& CallScope::threadPins() noexcept {
  thread_local CallPins pins;
  return pins;
}

void CallScope::release(CallPins& pins) {
  for (size_t i = 0; i < pins.pinned; ++i) unpin(pins.pins[i]);
  pins.pinned = 0;
}

void CallScope::pin(comm_communicator* c) {
  CallPins& pins = threadPins();
  if (pins.depth == 0) fail(COMM_ERR_INTERNAL, "a communicator was looked up outside a C call's guard");
  if (pins.pinned == CallPins::kMax)
    fail(COMM_ERR_INTERNAL, "a call looked up more than {} communicators", CallPins::kMax);
  // Before the caller reads `destroyed` (sequentially consistent): a
  // comm_destroy that sets it afterwards sees this pin and waits.
  c->calls.fetch_add(1);
  pins.pins[pins.pinned++] = c;
}

}  // namespace comm::api
