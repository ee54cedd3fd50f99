// The bodies of the public opaque communicator, handle and batch types, and
// the checks that turn a C pointer into the engine object behind it.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "api/live_set.h"
#include "comm.h"
#include "core/communicator.h"
#include "core/operation.h"
#include "core/tensor.h"

// Never freed: comm_destroy puts it back in a pool for the next
// communicator (makeCommunicatorObject), so a call on another thread that
// found it alive just before the destroy still reads a comm_communicator
// (api/call_scope.h).
namespace comm::api {
struct Making;
}

struct comm_communicator {
  // Written once before `ready` is set: an object a *_async call handed out
  // gets it when its communicator is made (api/making.h).
  std::shared_ptr<comm::core::Communicator> impl;
  std::atomic<bool> ready{false};
  std::shared_ptr<comm::api::Making> making;  // of a *_async call, until it is settled
  std::atomic<int> calls{0};                  // the C calls using it now (CallScope pins)
  std::atomic<bool> destroyed{false};
};

struct comm_handle {
  std::shared_ptr<comm::core::Operation> operation;  // null: finished when it was made
};

struct comm_batch {
  struct Entry {
    bool isSend;
    comm_tensor tensor;
    int peer;
    int tag;
  };
  std::vector<Entry> entries;
};

namespace comm::api {

LiveSet<comm_communicator>& liveCommunicators();
LiveSet<comm_handle>& liveHandles();
LiveSet<comm_batch>& liveBatches();
LiveSet<comm_config>& liveConfigs();
LiveSet<comm_tensor>& liveTensors();

// The communicator behind `c`, pinned until the C call returns; throws
// when it is NULL or destroyed.
core::Communicator& communicator(const comm_communicator* c);
// A comm_communicator for `impl`, alive (liveCommunicators) and from the
// pool; with `impl` null, one whose communicator is still being made.
comm_communicator* makeCommunicatorObject(std::shared_ptr<core::Communicator> impl);
// comm_destroy: makes the calls in progress on `c` on other threads fail,
// waits until they have returned (up to the communicator's timeout), then
// frees the communicator and puts `c` back in the pool.
void destroyCommunicatorObject(comm_communicator* c);
// Releases one pin of CallScope::pin.
void unpin(comm_communicator* c);
// Checks a tensor descriptor (NULL, destroyed) and returns it; `name` names
// the argument.
const comm_tensor& tensor(const comm_tensor* t, const char* name);
// Throws unless 0 <= rank < size; `what` names the argument ("peer", "root").
void checkRank(const core::Communicator& c, int rank, const char* what);
// Store a handle for an operation in *out (when out is not NULL).
void handOut(comm_handle** out, std::shared_ptr<core::Operation> operation);

}  // namespace comm::api
