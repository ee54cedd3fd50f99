// The state behind a comm_handle_t: an operation that finishes some time
// after the call that started it, successfully or with a status and message.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm.h"
#include "common/deadline.h"
#include "core/pending.h"
#include "transport/transport.h"

namespace comm::core {

class Communicator;

class Operation {
 public:
  virtual ~Operation() = default;
  // Wait until the operation ends or `deadline` passes. Returns its status, or
  // COMM_ERR_TIMEOUT when the deadline passed first (it may still finish).
  virtual comm_status_t wait(Deadline deadline) = 0;
  // Its status now: COMM_IN_PROGRESS until it ends.
  virtual comm_status_t test() = 0;
  // The failure message (valid once wait/test returned an error).
  const std::string& message() const { return message_; }

 protected:
  std::string message_;
};

// Sends and receives posted at once (send, recv, batch); progressed by
// whoever waits, or by the world's progress thread meanwhile.
class MessageOperation : public Operation {
 public:
  // `what` names the operation in error messages; it runs only when one is
  // written, so the fast path formats nothing. `flight`: its entry in the
  // communicator's flight recorder.
  MessageOperation(std::shared_ptr<Communicator> comm, std::function<std::string()> what, size_t expected,
                   uint64_t flight);
  ~MessageOperation() override;

  // Post a message; requests live in a deque so their addresses stay put.
  void postSend(int peer, uint64_t tag, const void* data, size_t size);
  void postRecv(int peer, uint64_t tag, void* data, size_t size);
  // Hand the operation to the progress thread (asynchronous use).
  void detach();
  // Run `step` when every message has arrived, on the thread that finds the
  // operation complete, before it reports success (copying received data
  // on to the device); a step that throws fails the operation.
  void onSuccess(std::function<void()> step) { onSuccess_ = std::move(step); }

  comm_status_t wait(Deadline deadline) override;
  comm_status_t test() override;

 private:
  comm_status_t finish(comm_status_t status, std::string message);

  std::shared_ptr<Communicator> comm_;
  std::function<std::string()> what_;
  std::function<void()> onSuccess_;
  std::deque<transport::Request> requests_;
  std::vector<Pending> pending_;
  Deadline ownDeadline_;
  uint64_t flight_;
  std::mutex mutex_;  // one waiter at a time
  bool finished_ = false;
  comm_status_t status_ = COMM_IN_PROGRESS;
  bool detached_ = false;
};

// A task run by a communicator's executor (asynchronous collectives).
class TaskOperation : public Operation {
 public:
  void complete(comm_status_t status, std::string message);
  comm_status_t wait(Deadline deadline) override;
  comm_status_t test() override;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  comm_status_t status_ = COMM_IN_PROGRESS;
};

}  // namespace comm::core
