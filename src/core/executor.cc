#include "core/executor.h"

namespace comm::core {

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Executor::submit(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(task));
  unfinished_.fetch_add(1, std::memory_order_relaxed);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  changed_.notify_all();
}

void Executor::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return idle(); });
}

void Executor::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
    unfinished_.fetch_sub(1, std::memory_order_release);
    changed_.notify_all();
  }
}

}  // namespace comm::core
