// Per-piece operation contexts: what libfabric hands back with a completion.
// They come from a free-list pool so the send/receive path never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <rdma/fabric.h>

#include "transport/transport.h"

namespace comm::transport {

class OfiEndpoint;

enum class OpKind : uint8_t { kSend, kRecv };
// kCancelling: posted, and comm asked the provider to cancel it; a
// cancellation comm did not ask for is the provider ending the operation
// because the peer's connection went away.
enum class OpState : uint8_t { kFree, kQueued, kPosted, kCancelling };

// One libfabric send or receive: a whole message or one chunk of it.
struct OfiOp {
  fi_context2 context;  // first member: op_context points here and at the op
  Request* request;     // null once a cancel gave up waiting for it
  OfiOp* next;          // link in the pool's free list or an endpoint's backlog
  OfiEndpoint* endpoint;
  void* buffer;
  size_t length;  // of this piece
  size_t offset;  // of this piece within the message
  size_t total;   // the whole message, for error messages
  uint64_t tag;
  fi_addr_t address;
  int peer;
  OpKind kind;
  OpState state;

  static OfiOp* from(void* opContext) { return static_cast<OfiOp*>(opContext); }
};
static_assert(std::is_standard_layout_v<OfiOp> && offsetof(OfiOp, context) == 0);

class OfiOpPool {
 public:
  OfiOp* acquire() {
    if (free_ == nullptr) grow();
    OfiOp* op = free_;
    free_ = op->next;
    op->next = nullptr;
    return op;
  }
  void release(OfiOp* op) {
    op->state = OpState::kFree;
    op->request = nullptr;
    op->next = free_;
    free_ = op;
  }
  // Visits every op in use (queued or posted); for the rare cancel path.
  template <typename Visit>
  void forEachBusy(Visit&& visit) {
    for (auto& block : blocks_) {
      for (size_t i = 0; i < kBlockSize; ++i) {
        if (block[i].state != OpState::kFree) visit(block[i]);
      }
    }
  }

 private:
  static constexpr size_t kBlockSize = 256;

  void grow() {
    // Blocks never move: libfabric holds pointers into them.
    auto block = std::make_unique<OfiOp[]>(kBlockSize);
    for (size_t i = 0; i < kBlockSize; ++i) {
      block[i].state = OpState::kFree;
      block[i].next = i + 1 < kBlockSize ? &block[i + 1] : free_;
    }
    free_ = &block[0];
    blocks_.push_back(std::move(block));
  }

  std::vector<std::unique_ptr<OfiOp[]>> blocks_;
  OfiOp* free_ = nullptr;
};

// FIFO of ops the provider refused with -FI_EAGAIN, posted again by progress
// in the order they were issued (which keeps same-tag matching order).
class OfiOpQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  OfiOp* front() const { return head_; }
  void push(OfiOp* op) {
    op->next = nullptr;
    op->state = OpState::kQueued;
    (head_ == nullptr ? head_ : tail_->next) = op;
    tail_ = op;
  }
  OfiOp* pop() {
    OfiOp* op = head_;
    head_ = op->next;
    if (head_ == nullptr) tail_ = nullptr;
    op->next = nullptr;
    return op;
  }
  void remove(OfiOp* op) {
    OfiOp* previous = nullptr;
    for (OfiOp* at = head_; at != nullptr; previous = at, at = at->next) {
      if (at != op) continue;
      (previous == nullptr ? head_ : previous->next) = op->next;
      if (tail_ == op) tail_ = previous;
      op->next = nullptr;
      return;
    }
  }

 private:
  OfiOp* head_ = nullptr;
  OfiOp* tail_ = nullptr;
};

}  // namespace comm::transport
