// A point in time after which a wait gives up.
#pragma once

#include <chrono>

namespace comm {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds timeout) : at_(Clock::now() + timeout) {}
  static Deadline never() { return Deadline(std::chrono::hours(24 * 365)); }
  bool expired() const { return Clock::now() >= at_; }
  std::chrono::milliseconds remaining() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now());
    return left.count() > 0 ? left : std::chrono::milliseconds(0);
  }
  Clock::time_point at() const { return at_; }

 private:
  Clock::time_point at_;
};

}  // namespace comm
