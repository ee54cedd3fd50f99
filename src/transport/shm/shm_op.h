// The shared-memory transport's bookkeeping: operations that outlive the call
// that started them, messages that arrived before their receive, the
// intrusive lists that hold both, and the pools they come from, so that
// steady traffic never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "transport/transport.h"

namespace comm::transport {

enum class ShmOpState : uint8_t {
  kQueued,     // send waiting for ring space (in the peer's backlog)
  kAnnounced,  // send whose request-to-send is out, waiting for the receiver
  kStreaming,  // send cleared to stream its chunks (in the peer's stream list)
  kPosted,     // receive waiting for its message (in the peer's posted list)
  kCopying,    // receive reading its message by Cross-Memory Attach (in the copy list)
  kReceiving,  // receive taking streamed chunks (in the peer's receiving list)
  kDraining,   // cancelled receive whose remaining chunks are discarded
};

struct ShmOp {
  Request* request = nullptr;  // null once a cancelled receive only drains
  char* buffer = nullptr;
  size_t size = 0;
  uint64_t tag = 0;
  uint64_t remoteToken = 0;    // the peer's operation, for replies and chunks
  uint64_t remoteAddress = 0;  // the message in the sender's memory (Cross-Memory Attach)
  size_t done = 0;             // bytes moved
  size_t claimed = 0;          // bytes handed to copiers (Cross-Memory Attach)
  int copiers = 0;             // threads copying a piece with the lock released
  int failure = 0;             // errno of a failed copy
  bool cancelled = false;
  int peer = -1;
  ShmOpState state = ShmOpState::kQueued;
  ShmOp* prev = nullptr;
  ShmOp* next = nullptr;

  // Operations are named to peers by address: it stays valid while the peer
  // can still refer to it.
  uint64_t token() const { return reinterpret_cast<uint64_t>(this); }
  static ShmOp* fromToken(uint64_t token) { return reinterpret_cast<ShmOp*>(token); }
};

// A message that arrived before a receive for it was posted.
struct ShmArrival {
  uint64_t tag = 0;
  size_t size = 0;
  bool rendezvous = false;  // announced only: senderToken and address say where it is
  uint64_t senderToken = 0;
  uint64_t address = 0;
  std::vector<char> data;  // an eager message's bytes; keeps its capacity across reuse
  ShmArrival* prev = nullptr;
  ShmArrival* next = nullptr;
};

// Doubly linked through the elements' own prev/next: O(1) removal from the
// middle (cancel, out-of-order matches) without allocating.
template <typename T>
class ShmList {
 public:
  bool empty() const { return head_ == nullptr; }
  T* front() const { return head_; }
  void pushBack(T* item) {
    item->next = nullptr;
    item->prev = tail_;
    (tail_ == nullptr ? head_ : tail_->next) = item;
    tail_ = item;
  }
  void remove(T* item) {
    (item->prev == nullptr ? head_ : item->prev->next) = item->next;
    (item->next == nullptr ? tail_ : item->next->prev) = item->prev;
    item->prev = item->next = nullptr;
  }
  // The first element `match` accepts, in list order, or nullptr.
  template <typename Match>
  T* find(Match&& match) const {
    for (T* item = head_; item != nullptr; item = item->next) {
      if (match(*item)) return item;
    }
    return nullptr;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
};

// Elements never move (a deque only appends), so their addresses can serve
// as tokens; released ones are reused before anything new is built.
template <typename T>
class ShmPool {
 public:
  T* acquire() {
    if (free_ == nullptr) return &storage_.emplace_back();
    T* item = free_;
    free_ = item->next;
    item->next = nullptr;
    return item;
  }
  void release(T* item) {
    item->prev = nullptr;
    item->next = free_;
    free_ = item;
  }

 private:
  std::deque<T> storage_;
  T* free_ = nullptr;
};

}  // namespace comm::transport
