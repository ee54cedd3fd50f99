#include "core/operation.h"

#include "common/error.h"
#include "core/communicator.h"

namespace comm::core {

MessageOperation::MessageOperation(std::shared_ptr<Communicator> comm, std::function<std::string()> what,
                                   size_t expected, uint64_t flight)
    : comm_(std::move(comm)), what_(std::move(what)), ownDeadline_(comm_->deadline()), flight_(flight) {
  pending_.reserve(expected);
}

MessageOperation::~MessageOperation() {
  if (finished_) return;
  comm_->flight().finish(flight_, false);
  if (detached_) comm_->world().progressThread().operationFinished();
  comm_->abandon(std::move(requests_), pending_);
}

void MessageOperation::postSend(int peer, uint64_t tag, const void* data, size_t size) {
  transport::Request& request = requests_.emplace_back();
  comm_->send(peer, tag, data, size, request);
  pending_.push_back({&request, peer, false});
}

void MessageOperation::postRecv(int peer, uint64_t tag, void* data, size_t size) {
  transport::Request& request = requests_.emplace_back();
  comm_->recv(peer, tag, data, size, request);
  pending_.push_back({&request, peer, true});
}

void MessageOperation::detach() {
  detached_ = true;
  comm_->world().progressThread().operationStarted();
}

comm_status_t MessageOperation::finish(comm_status_t status, std::string message) {
  if (status == COMM_OK && onSuccess_) {
    try {
      onSuccess_();
    } catch (const Error& e) {
      status = e.status();
      message = fmt::format("{}: {}", what_(), e.what());
    }
  }
  onSuccess_ = nullptr;  // and what it holds
  if (detached_) comm_->world().progressThread().operationFinished();
  finished_ = true;
  comm_->flight().finish(flight_, status == COMM_OK);
  status_ = status;
  message_ = std::move(message);
  return status_;
}

comm_status_t MessageOperation::wait(Deadline deadline) {
  std::lock_guard lock(mutex_);
  if (finished_) return status_;
  bool ownExpires = ownDeadline_.at() <= deadline.at();
  try {
    if (ownExpires) {
      comm_->waitAll(pending_, ownDeadline_, what_, nullptr, flight_);
    } else if (!comm_->progressUntil(pending_, deadline, what_, nullptr, flight_)) {
      message_ = fmt::format("{}: not complete when the wait's timeout ran out", what_());
      return COMM_ERR_TIMEOUT;
    }
  } catch (const Error& e) {
    return finish(e.status(), e.what());
  }
  return finish(COMM_OK, "");
}

comm_status_t MessageOperation::test() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return COMM_IN_PROGRESS;  // another thread is waiting on it
  if (finished_) return status_;
  comm_->world().transport().progress();
  for (const Pending& p : pending_) {
    if (!p.request->done.load(std::memory_order_acquire)) {
      if (ownDeadline_.expired()) {
        lock.unlock();
        return wait(ownDeadline_);
      }
      return COMM_IN_PROGRESS;
    }
  }
  lock.unlock();
  return wait(Deadline::never());  // reports the first failure, if any
}

void TaskOperation::complete(comm_status_t status, std::string message) {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    status_ = status;
    message_ = std::move(message);
  }
  done_.notify_all();
}

comm_status_t TaskOperation::wait(Deadline deadline) {
  std::unique_lock lock(mutex_);
  if (!done_.wait_until(lock, deadline.at(), [this] { return finished_; })) {
    message_ = "the operation was not complete when the wait's timeout ran out";
    return COMM_ERR_TIMEOUT;
  }
  return status_;
}

comm_status_t TaskOperation::test() {
  std::lock_guard lock(mutex_);
  return finished_ ? status_ : COMM_IN_PROGRESS;
}

}  // namespace comm::core
