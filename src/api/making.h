// Communicators made without blocking the caller (comm_init_async,
// comm_split_async, comm_group_create_async, comm_shrink_async): the call
// hands out the comm_communicator at once, with a handle that completes
// once the communicator behind it is made. Until then every call on the
// object fails saying so; comm_abort and comm_destroy on it end the wait
// at once (the handle completes with COMM_ERR_ABORTED), and whatever is
// made after that is freed where it is made.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "comm.h"
#include "core/communicator.h"
#include "core/operation.h"

struct comm_communicator;
struct comm_handle;

namespace comm::api {

struct Making {
  std::mutex mutex;
  comm_communicator* object = nullptr;  // null once abandoned
  std::shared_ptr<core::TaskOperation> operation = std::make_shared<core::TaskOperation>();
  bool settled = false;  // made, failed or abandoned
  comm_status_t status = COMM_IN_PROGRESS;
  std::string message;  // why it failed
};

// How a communicator is made and where: `run` runs the task it is given
// later (on a thread of its own, or behind the parent's asynchronous
// collectives), the task calls `make`.
using Runner = std::function<void(std::function<void()> task)>;
using Maker = std::function<std::shared_ptr<core::Communicator>()>;

// Hands out the object in *out and the handle in *handle, and has `run`
// make its communicator. With `out` null (a split with COMM_UNDEFINED) the
// handle only tells when this rank's part is done.
void makeLater(comm_communicator** out, comm_handle** handle, const Runner& run, Maker make);

// Runs a task on a thread of its own.
void runOnOwnThread(std::function<void()> task);

// Makes a communicator from `parent` for `call` (comm_split...): within the
// call when `handle` is null, else later on a thread of its own. *out gets
// null when `make` gives null (COMM_UNDEFINED); `out` null: the caller
// wants no object. Bracketed by Communicator::beginChild and endChild.
void makeFrom(const char* call, comm_communicator** out, comm_handle** handle, core::Communicator& parent, Maker make);

// A caller's name for the communicator (NULL for the default), copied: a
// making that runs later must not read the caller's string after the call.
class CopiedName {
 public:
  explicit CopiedName(const char* name) : given_(name != nullptr), text_(given_ ? name : "") {}
  const char* get() const { return given_ ? text_.c_str() : nullptr; }

 private:
  bool given_;
  std::string text_;
};

// Ends the wait for the communicator of `making` with `status` and `why`,
// unless it is made already (false then).
bool abandon(Making& making, comm_status_t status, const std::string& why);

// The error of a call on `c`, which is not made (yet, or ever).
[[noreturn]] void failUnmade(comm_communicator& c);

}  // namespace comm::api
