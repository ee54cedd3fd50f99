#include "api/call_scope.h"

#include <array>
#include <cstddef>

#include "api/objects.h"
#include "common/error.h"

namespace comm::api {
namespace {

// A call looks up one communicator (comm_split and comm_group_create their
// parent); a few slots leave room.
constexpr size_t kMaxPins = 4;

struct ThreadCalls {
  int depth = 0;
  size_t pinned = 0;
  std::array<comm_communicator*, kMaxPins> pins{};
};

thread_local ThreadCalls calls;

}  // namespace

CallScope::CallScope() noexcept { ++calls.depth; }

CallScope::~CallScope() {
  if (--calls.depth != 0) return;
  for (size_t i = 0; i < calls.pinned; ++i) unpin(calls.pins[i]);
  calls.pinned = 0;
}

void CallScope::pin(comm_communicator* c) {
  if (calls.depth == 0) fail(COMM_ERR_INTERNAL, "a communicator was looked up outside a C call's guard");
  if (calls.pinned == kMaxPins) fail(COMM_ERR_INTERNAL, "a call looked up more than {} communicators", kMaxPins);
  c->calls.fetch_add(1);
  calls.pins[calls.pinned++] = c;
}

}  // namespace comm::api
