// Drives the transport while asynchronous point-to-point operations are
// outstanding and nobody waits on them, so they complete without the user
// polling. Sleeps on a condition variable when there is nothing to do, and
// backs off to short sleeps while operations are outstanding but quiet, so an
// idle rank never holds a core.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace comm::transport {
class Transport;
}

namespace comm::core {

class ProgressThread {
 public:
  explicit ProgressThread(transport::Transport& transport);
  ~ProgressThread();

  // Bracket the life of an asynchronous operation.
  void operationStarted();
  void operationFinished();

 private:
  void run();

  transport::Transport& transport_;
  std::mutex mutex_;
  std::condition_variable wake_;
  int outstanding_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // started on the first operation
};

}  // namespace comm::core
