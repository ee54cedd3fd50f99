// Buffers for messages that arrive before their receive. glibc maps every
// allocation of 128 KiB or more afresh and unmaps it when it is freed, so a
// stream of early chunks (collectives cut large messages into chunks of a
// few hundred KiB, and a sender often runs ahead of the receives) touched
// new pages for every one: the page faults cost several times the copy, and
// where ranks share cores they took the time of the ranks with work. Large
// buffers are kept for the next such message instead.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace comm::transport::tcp {

class PayloadPool {
 public:
  // Buffers hold `largest` bytes; larger messages get one of their own.
  explicit PayloadPool(size_t largest) : largest_(largest) {}

  // A buffer for `size` bytes.
  std::unique_ptr<char[]> take(size_t size) {
    if (!pooled(size)) return std::make_unique_for_overwrite<char[]>(size);
    if (spare_.empty()) return std::make_unique_for_overwrite<char[]>(largest_);
    std::unique_ptr<char[]> buffer = std::move(spare_.back());
    spare_.pop_back();
    return buffer;
  }
  // Returns a buffer take(size) gave.
  void giveBack(std::unique_ptr<char[]> buffer, size_t size) {
    if (pooled(size) && spare_.size() < kMaxSpare) spare_.push_back(std::move(buffer));
  }

 private:
  bool pooled(size_t size) const { return size >= kPooledBytes && size <= largest_; }

  // Below this the heap's free lists serve, without mapping anything.
  static constexpr size_t kPooledBytes = size_t{64} << 10;
  // What the pool keeps at most (256 of kEagerBytes: 128 MiB, and only
  // after that many early messages were held at once). A sender runs ahead
  // of the receives by tens of chunks in a large all-reduce across hosts,
  // and by the whole message where the link is faster than the reduction
  // (loopback, fast networks): a 64 MiB all_reduce at 2 ranks holds 128
  // early chunks of its 32 MiB halves. Every buffer beyond the pool is
  // mapped afresh, which cost half the speed at 10 Gbit with 16 spares and
  // several times the time on loopback with 64 (docs/dev/performance-history.md).
  static constexpr size_t kMaxSpare = 256;

  size_t largest_;
  std::vector<std::unique_ptr<char[]>> spare_;
};

}  // namespace comm::transport::tcp
