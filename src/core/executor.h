// Runs a communicator's asynchronous collectives one after another, in issue
// order, on a thread of its own (started on first use, sleeping when idle).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace comm::core {

class Executor {
 public:
  ~Executor();
  void submit(std::function<void()> task);
  // True when no task is queued or running. Lock-free: every blocking
  // collective asks.
  bool idle() const { return unfinished_.load(std::memory_order_acquire) == 0; }
  // Block until every task submitted so far has run.
  void drain();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  std::atomic<size_t> unfinished_{0};  // queued or running; changed under mutex_
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace comm::core
