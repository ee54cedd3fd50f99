#include "core/progress_thread.h"

#include <chrono>

#include "common/backoff.h"
#include "common/log.h"
#include "transport/transport.h"

namespace comm::core {

ProgressThread::ProgressThread(transport::Transport& transport) : transport_(transport) {}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressThread::operationStarted() {
  std::lock_guard lock(mutex_);
  if (++outstanding_ == 1) {
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_all();
  }
}

void ProgressThread::operationFinished() {
  std::lock_guard lock(mutex_);
  --outstanding_;
}

void ProgressThread::run() {
  Backoff backoff;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (outstanding_ == 0) {
      wake_.wait(lock, [this] { return stopping_ || outstanding_ > 0; });
      backoff.reset();
      continue;
    }
    lock.unlock();
    try {
      if (transport_.progress()) {
        backoff.reset();
      } else {
        transport::pauseOn(backoff, transport_);
      }
    } catch (const std::exception& error) {
      // Escaping, it would end the process. The transport's state is in
      // doubt: stop driving it; a caller that waits drives it itself and is
      // told what failed.
      log::error("progress thread: {}; operations now progress only while a caller waits on them", error.what());
      return;
    }
    lock.lock();
  }
}

}  // namespace comm::core
