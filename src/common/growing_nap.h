// How a rank that polls the rendezvous store waits between two looks: a
// short nap first, as what it waits for is usually about to come, then
// doubling ones up to a cap, so that a long wait leaves the cores to the
// ranks with work and still notices within milliseconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace comm {

class GrowingNap {
 public:
  void take() {
    std::this_thread::sleep_for(next_);
    next_ = std::min(next_ * 2, kLongest);
  }

 private:
  static constexpr std::chrono::nanoseconds kLongest = std::chrono::milliseconds(2);
  std::chrono::nanoseconds next_ = std::chrono::microseconds(50);
};

}  // namespace comm
