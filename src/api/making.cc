#include "api/making.h"

#include <thread>
#include <utility>

#include "api/objects.h"
#include "common/error.h"

namespace comm::api {
namespace {

void settle(Making& making, std::shared_ptr<core::Communicator> made) {
  {
    std::lock_guard lock(making.mutex);
    if (making.settled) return;  // abandoned: `made` goes here, on the thread that made it
    making.settled = true;
    making.status = COMM_OK;
    if (making.object != nullptr && made) {
      making.object->impl = std::move(made);
      making.object->ready.store(true, std::memory_order_release);
    }
  }
  making.operation->complete(COMM_OK, "");
}

void settleFailed(Making& making, comm_status_t status, const std::string& message) {
  {
    std::lock_guard lock(making.mutex);
    if (making.settled) return;
    making.settled = true;
    making.status = status;
    making.message = message;
  }
  making.operation->complete(status, message);
}

}  // namespace

void makeLater(comm_communicator** out, comm_handle** handle, const Runner& run, Maker make) {
  auto making = std::make_shared<Making>();
  comm_communicator* object = nullptr;
  if (out != nullptr) {
    object = makeCommunicatorObject(nullptr);
    object->making = making;
    making->object = object;
  }
  try {
    run([making, make = std::move(make)] {
      try {
        settle(*making, make());
      } catch (const Error& error) {
        settleFailed(*making, error.status(), error.what());
      } catch (const std::bad_alloc&) {
        settleFailed(*making, COMM_ERR_NO_MEMORY, "out of memory");
      } catch (const std::exception& error) {
        settleFailed(*making, COMM_ERR_INTERNAL, error.what());
      }
    });
  } catch (...) {
    if (object != nullptr) {
      liveCommunicators().remove(object);
      destroyCommunicatorObject(object);
    }
    throw;
  }
  handOut(handle, making->operation);
  if (out != nullptr) *out = object;
}

void runOnOwnThread(std::function<void()> task) {
  // Detached: it holds what it needs, and comm_abort or comm_destroy of
  // the object end the caller's wait without it.
  std::thread(std::move(task)).detach();
}

void makeFrom(const char* call, comm_communicator** out, comm_handle** handle, core::Communicator& parent, Maker make) {
  parent.beginChild(call);
  if (handle == nullptr) {
    std::shared_ptr<core::Communicator> child;
    try {
      child = make();
    } catch (...) {
      parent.endChild();
      throw;
    }
    parent.endChild();
    if (out != nullptr && child) *out = makeCommunicatorObject(std::move(child));
    return;
  }
  try {
    makeLater(out, handle, runOnOwnThread, [parent = parent.shared_from_this(), make = std::move(make)] {
      struct EndChild {
        core::Communicator& parent;
        ~EndChild() { parent.endChild(); }
      } end{*parent};
      return make();
    });
  } catch (...) {
    parent.endChild();
    throw;
  }
}

bool abandon(Making& making, comm_status_t status, const std::string& why) {
  {
    std::lock_guard lock(making.mutex);
    if (making.settled) return making.status != COMM_OK;
    making.object = nullptr;
    making.settled = true;
    making.status = status;
    making.message = why;
  }
  making.operation->complete(status, why);
  return true;
}

void failUnmade(comm_communicator& c) {
  Making& making = *c.making;
  std::lock_guard lock(making.mutex);
  if (!making.settled) {
    fail(COMM_ERR_INVALID_USAGE, "comm ({}) is still being made: wait for the handle of the call that made it first",
         static_cast<const void*>(&c));
  }
  fail(COMM_ERR_INVALID_USAGE, "comm ({}) was not made ({}): destroy it", static_cast<const void*>(&c), making.message);
}

}  // namespace comm::api
