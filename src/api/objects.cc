#include "api/objects.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "api/call_scope.h"
#include "api/making.h"
#include "common/deadline.h"

namespace comm::api {

LiveSet<comm_communicator>& liveCommunicators() {
  static LiveSet<comm_communicator> set;
  return set;
}
LiveSet<comm_handle>& liveHandles() {
  static LiveSet<comm_handle> set;
  return set;
}
LiveSet<comm_batch>& liveBatches() {
  static LiveSet<comm_batch> set;
  return set;
}
LiveSet<comm_config>& liveConfigs() {
  static LiveSet<comm_config> set;
  return set;
}
LiveSet<comm_tensor>& liveTensors() {
  static LiveSet<comm_tensor> set;
  return set;
}

core::Communicator& communicator(const comm_communicator* c) {
  liveCommunicators().check(c, "communicator", "comm");
  // Pinned before destroyed is read: a comm_destroy that sets destroyed
  // after this read sees the pin and waits for this call.
  auto* object = const_cast<comm_communicator*>(c);
  CallScope::pin(object);
  if (object->destroyed.load()) {
    fail(COMM_ERR_INVALID_USAGE, "comm ({}) was destroyed on another thread as this call began",
         static_cast<const void*>(c));
  }
  if (!object->ready.load(std::memory_order_acquire)) failUnmade(*object);
  return *object->impl;
}

namespace {

// comm_communicator objects comm_destroy gave back, for the next ones.
struct CommunicatorPool {
  std::mutex mutex;
  std::vector<comm_communicator*> free;
};

CommunicatorPool& pool() {
  static auto* pool = new CommunicatorPool();  // never destroyed: objects may outlive static destruction
  return *pool;
}

}  // namespace

comm_communicator* makeCommunicatorObject(std::shared_ptr<core::Communicator> impl) {
  comm_communicator* c = nullptr;
  {
    std::lock_guard lock(pool().mutex);
    if (!pool().free.empty()) {
      c = pool().free.back();
      pool().free.pop_back();
    }
  }
  if (c == nullptr) c = new comm_communicator();
  c->ready.store(impl != nullptr, std::memory_order_release);
  c->impl = std::move(impl);
  c->making.reset();
  c->destroyed.store(false);
  liveCommunicators().add(c);
  return c;
}

void destroyCommunicatorObject(comm_communicator* c) {
  // Still being made, or its making failed: there is no communicator to
  // free (unless it was made meanwhile: then as any other).
  if (!c->ready.load(std::memory_order_acquire) &&
      abandon(*c->making, COMM_ERR_ABORTED, "the communicator was destroyed while it was being made")) {
    c->destroyed.store(true);
    while (c->calls.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // each fails at once
    c->making.reset();
    std::lock_guard lock(pool().mutex);
    pool().free.push_back(c);
    return;
  }
  std::shared_ptr<core::Communicator> impl = c->impl;
  c->destroyed.store(true);
  impl->markDestroyed();
  // The calls stopped by markDestroyed return within moments; the deadline
  // is for a call that never looks (a bug), which then keeps it allocated
  // rather than freed under it.
  const Deadline deadline = impl->deadline();
  while (c->calls.load() != 0) {
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT,
           "communicator '{}': {} call(s) on other threads did not return within {} ms of the destroy; it stays "
           "allocated",
           impl->name(), c->calls.load(), impl->timeout().count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  c->impl.reset();
  impl.reset();  // the communicator goes here, unless a handle still holds it
  std::lock_guard lock(pool().mutex);
  pool().free.push_back(c);
}

void unpin(comm_communicator* c) { c->calls.fetch_sub(1, std::memory_order_release); }

const comm_tensor& tensor(const comm_tensor* t, const char* name) {
  liveTensors().check(t, "tensor", name);
  return *t;
}

void checkRank(const core::Communicator& c, int rank, const char* what) {
  if (rank < 0 || rank >= c.size()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} {} is outside 0..{} of communicator '{}'", what, rank, c.size() - 1, c.name());
  }
}

void handOut(comm_handle** out, std::shared_ptr<core::Operation> operation) {
  if (out == nullptr) return;
  auto* handle = new comm_handle{std::move(operation)};
  liveHandles().add(handle);
  *out = handle;
}

}  // namespace comm::api
