// Transport over libfabric: each peer's endpoint chosen by ofi_routes.h,
// and here the tagged messages, cut into chunks of what that provider
// carries, posted (or queued while the provider is full), their
// completions and errors reaped by progress(), and cancels. Every fi_* call
// happens under mutex_ (domains are opened with FI_THREAD_DOMAIN).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include <rdma/fi_errno.h>

#include "common/deadline.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/ofi/ofi_endpoint.h"
#include "transport/ofi/ofi_op.h"
#include "transport/ofi/ofi_routes.h"
#include "transport/ofi/ofi_transport.h"

namespace comm::transport {
namespace {

constexpr size_t kCompletionBatch = 16;
// How many batches (or errors) one drain of a completion queue takes at most.
constexpr int kDrainRounds = 64;
// Messages this large go by rendezvous, whose bytes (rxm over tcp's sockets,
// shm's copies) move only while somebody polls the completion queue: a waiter
// must not nap while one is in flight: a nap stalls the transfer for its
// whole length, and large transfers over tcp;ofi_rxm lost a large part of
// their bandwidth to it.
constexpr size_t kPolledBytes = size_t{64} << 10;
// How long cancel() waits for the provider to confirm; past it the request is
// declared done and its late completion is ignored.
constexpr std::chrono::seconds kCancelWait{5};

bool peerIsGone(int error) {
  switch (error) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_ESHUTDOWN:
    case FI_EHOSTDOWN:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ETIMEDOUT:
    case FI_EREMOTEIO: return true;
    default: return false;
  }
}

// The provider's queue is full for now; posting again after progress works.
// shm (1.17) reports a full receive queue as -FI_ENOMEM.
bool queueFull(ssize_t rc) { return rc == -FI_EAGAIN || rc == -FI_ENOMEM; }

const char* direction(const OfiOp& op) { return op.kind == OpKind::kSend ? "send to" : "receive from"; }

class OfiTransport final : public Transport {
 public:
  explicit OfiTransport(const Options& options) : routes_(options) {}

  std::vector<uint8_t> localAddress() const override { return routes_.localAddress(); }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override {
    std::lock_guard lock(mutex_);
    routes_.connect(selfRank, peers);
  }
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override {
    std::lock_guard lock(mutex_);
    start(OpKind::kSend, peer, tag, const_cast<void*>(data), size, request);
  }
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override {
    std::lock_guard lock(mutex_);
    start(OpKind::kRecv, peer, tag, data, size, request);
  }
  void cancel(Request& request) override;
  // After a peer's death rxm (over tcp, in libfabric 1.17) keeps trying to
  // reach it for the sends it still holds, and messages between live ranks
  // on other hosts stop arriving (docs/dev/fault-tolerance-plan.md).
  bool survivesPeerDeath() const override {
    std::lock_guard lock(mutex_);
    for (const Slot& slot : routes_.slots()) {
      if (slot.used && slot.endpoint->provider().find("ofi_rxm") != std::string::npos) return false;
    }
    return true;
  }
  bool busy() const override { return polledInFlight_.load(std::memory_order_relaxed) > 0; }
  bool progress() override {
    // Whoever holds the lock reaps every request's completions, so a caller
    // that finds it taken loses nothing by returning and trying again.
    std::unique_lock lock(mutex_, std::try_to_lock);
    return lock.owns_lock() && progressLocked();
  }
  std::string providerFor(int peer) const override;

 private:
  using Slot = OfiRoutes::Slot;
  using Route = OfiRoutes::Route;

  void start(OpKind kind, int peer, uint64_t tag, void* buffer, size_t size, Request& request);
  void releaseOp(OfiOp* op) {
    if (op->length >= kPolledBytes) polledInFlight_.fetch_sub(1, std::memory_order_relaxed);
    pool_.release(op);
  }
  static ssize_t post(OfiOp& op);
  bool progressLocked();
  void drain(Slot& slot);
  void flush(OfiOpQueue& backlog);
  void onCompletion(const fi_cq_tagged_entry& entry);
  void onError(const OfiEndpoint& endpoint, const fi_cq_err_entry& entry);
  void reportShorter(const OfiOp& op, size_t pieceBytes);
  void reportLonger(const OfiOp& op);
  // Returns whether send pieces the provider holds were left to it.
  bool cancelPieces(Request& request);
  void finish(OfiOp* op);
  void abandon(Request& request, size_t pieces);
  void complete(Request& request) {
    request.markDone();
    completed_ = true;
  }

  mutable std::mutex mutex_;
  OfiOpPool pool_;                      // declared before routes_: outlives the endpoints that reference its ops
  std::atomic<int> polledInFlight_{0};  // ops of kPolledBytes or more between acquire and release
  OfiRoutes routes_;
  bool completed_ = false;
};

std::string OfiTransport::providerFor(int peer) const {
  std::lock_guard lock(mutex_);
  return routes_.routeTo(peer).slot->endpoint->provider();
}

// A message of N bytes travels as floor(N / chunk) full chunks and one final
// chunk of N mod chunk bytes (0 included). The final chunk is always shorter
// than a full one, so whenever sender and receiver disagree on N some chunk
// pair differs in size and the receive reports a mismatch instead of quietly
// matching part of another message.
void OfiTransport::start(OpKind kind, int peer, uint64_t tag, void* buffer, size_t size, Request& request) {
  const Route& route = routes_.routeTo(peer);
  Slot& slot = *route.slot;
  // Most messages fit one chunk; skip the 64-bit division for them.
  const size_t pieces = size < slot.chunk ? 1 : size / slot.chunk + 1;
  request.restart(static_cast<int>(pieces));

  OfiOpQueue& backlog = kind == OpKind::kSend ? slot.sendBacklog : slot.recvBacklog;
  for (size_t piece = 0; piece < pieces; ++piece) {
    OfiOp* op = pool_.acquire();
    op->request = &request;
    op->endpoint = slot.endpoint.get();
    op->offset = piece * slot.chunk;
    op->buffer = static_cast<char*>(buffer) + op->offset;
    op->length = piece + 1 < pieces ? slot.chunk : size - op->offset;
    if (op->length >= kPolledBytes) polledInFlight_.fetch_add(1, std::memory_order_relaxed);
    op->total = size;
    op->tag = tag;
    op->address = route.address;
    op->peer = peer;
    op->kind = kind;
    // Behind a backlog the op must wait its turn to keep matching order.
    ssize_t rc = backlog.empty() ? post(*op) : -FI_EAGAIN;
    if (rc == 0) {
      op->state = OpState::kPosted;
    } else if (queueFull(rc)) {
      backlog.push(op);
    } else {
      releaseOp(op);
      request.fail(COMM_ERR_TRANSPORT, "fabric: {} rank {} (tag {:#x}, {} bytes) over {}: {} ({})",
                   kind == OpKind::kSend ? "fi_tsend to" : "fi_trecv from", peer, tag, size, slot.endpoint->provider(),
                   fabricError(static_cast<int>(-rc)), rc);
      if (piece == 0) {
        request.parts = 0;
        complete(request);
        throw Error(request.status, request.error);
      }
      if (kind == OpKind::kRecv) cancelPieces(request);
      return abandon(request, pieces - piece);
    }
  }
}

ssize_t OfiTransport::post(OfiOp& op) {
  return op.kind == OpKind::kSend ? op.endpoint->postSend(op.buffer, op.length, op.address, op.tag, &op.context)
                                  : op.endpoint->postRecv(op.buffer, op.length, op.address, op.tag, &op.context);
}

bool OfiTransport::progressLocked() {
  completed_ = false;
  for (Slot& slot : routes_.slots()) {
    if (!slot.used) continue;
    drain(slot);
    flush(slot.sendBacklog);
    flush(slot.recvBacklog);
  }
  return completed_;
}

void OfiTransport::drain(Slot& slot) {
  fi_cq_tagged_entry entries[kCompletionBatch];
  // Bounded: after a peer's death rxm can report errors as fast as they are
  // read, and the caller must get back to its deadline between rounds.
  for (int round = 0; round < kDrainRounds; ++round) {
    ssize_t count = slot.endpoint->readCompletions(entries, kCompletionBatch);
    if (count > 0) {
      for (ssize_t i = 0; i < count; ++i) onCompletion(entries[i]);
      if (static_cast<size_t>(count) < kCompletionBatch) return;
    } else if (count == -FI_EAVAIL) {
      fi_cq_err_entry error;
      if (!slot.endpoint->readError(error)) return;
      onError(*slot.endpoint, error);
    } else if (count == -FI_EAGAIN) {
      return;
    } else {
      fail(COMM_ERR_TRANSPORT, "fabric: fi_cq_read on {} failed: {} ({})", slot.endpoint->provider(),
           fabricError(static_cast<int>(-count)), count);
    }
  }
  completed_ = true;  // more may be waiting: the caller comes back
}

void OfiTransport::flush(OfiOpQueue& backlog) {
  while (!backlog.empty()) {
    OfiOp* op = backlog.front();
    ssize_t rc = post(*op);
    if (queueFull(rc)) return;
    backlog.pop();
    if (rc == 0) {
      op->state = OpState::kPosted;
      continue;
    }
    Request& request = *op->request;
    request.fail(COMM_ERR_TRANSPORT, "fabric: {} rank {} (tag {:#x}, {} bytes) over {}: {} ({})", direction(*op),
                 op->peer, op->tag, op->total, op->endpoint->provider(), fabricError(static_cast<int>(-rc)), rc);
    OpKind kind = op->kind;
    finish(op);
    if (kind == OpKind::kRecv && !request.done.load(std::memory_order_relaxed)) cancelPieces(request);
  }
}

void OfiTransport::onCompletion(const fi_cq_tagged_entry& entry) {
  OfiOp* op = OfiOp::from(entry.op_context);
  // Only receive completions carry a trustworthy length (send ones are 0 on shm/rxm).
  if (op->request != nullptr && op->kind == OpKind::kRecv) {
    op->request->bytes += entry.len;
    if (entry.len != op->length) {
      // A shorter piece is the sender's final one: its size is exact.
      reportShorter(*op, entry.len);
      Request& request = *op->request;
      finish(op);
      if (!request.done.load(std::memory_order_relaxed)) cancelPieces(request);
      return;
    }
  }
  finish(op);
}

void OfiTransport::onError(const OfiEndpoint& endpoint, const fi_cq_err_entry& entry) {
  OfiOp* op = OfiOp::from(entry.op_context);
  if (op == nullptr) {
    log::error("fabric: {} reported an error for no operation: {}", endpoint.provider(), endpoint.describe(entry));
    return;
  }
  if (op->request == nullptr) {
    releaseOp(op);
    return;
  }
  Request& request = *op->request;
  // shm (1.17) reports negated codes.
  const int code = std::abs(entry.err);
  const bool cancelledByComm = code == FI_ECANCELED && op->state == OpState::kCancelling;
  if (cancelledByComm) {
    request.fail(COMM_ERR_ABORTED, "fabric: {} rank {} with tag {:#x} was cancelled", direction(*op), op->peer,
                 op->tag);
  } else if (code == FI_ECANCELED) {
    // rxm cancels the receives posted for a peer whose connection closed.
    request.fail(COMM_ERR_REMOTE, "fabric: {} rank {} (tag {:#x}) was ended by {}: the connection to rank {} is gone",
                 direction(*op), op->peer, op->tag, endpoint.provider(), op->peer);
  } else if (code == FI_ETRUNC && op->kind == OpKind::kRecv) {
    // Providers disagree on what olen counts (the bytes cut off, or the
    // whole message), so a truncated message's size is not known: only that
    // it is longer than the receive.
    reportLonger(*op);
  } else {
    comm_status_t status = peerIsGone(code) ? COMM_ERR_REMOTE : COMM_ERR_TRANSPORT;
    request.fail(status, "fabric: {} rank {} (tag {:#x}, {} bytes) over {} failed: {}", direction(*op), op->peer,
                 op->tag, op->total, endpoint.provider(), endpoint.describe(entry));
  }
  OpKind kind = op->kind;
  finish(op);
  if (kind == OpKind::kRecv && !cancelledByComm && !request.done.load(std::memory_order_relaxed)) {
    cancelPieces(request);
  }
}

void OfiTransport::reportShorter(const OfiOp& op, size_t pieceBytes) {
  op.request->fail(COMM_ERR_MISMATCH, "fabric: message from rank {} with tag {:#x} is {} bytes, expected {}", op.peer,
                   op.tag, op.offset + pieceBytes, op.total);
}

void OfiTransport::reportLonger(const OfiOp& op) {
  op.request->fail(COMM_ERR_MISMATCH,
                   "fabric: message from rank {} with tag {:#x} is longer than the {} bytes expected", op.peer, op.tag,
                   op.total);
}

bool OfiTransport::cancelPieces(Request& request) {
  bool sendsLeft = false;
  pool_.forEachBusy([&](OfiOp& op) {
    if (op.request != &request) return;
    if (op.state == OpState::kPosted || op.state == OpState::kCancelling) {
      // libfabric cannot take a send back (rxm ignores the request).
      if (op.kind == OpKind::kSend) {
        sendsLeft = true;
        return;
      }
      // Failure means the piece already completed or is past cancelling; its
      // completion arrives either way.
      op.state = OpState::kCancelling;
      op.endpoint->cancel(&op.context);
      return;
    }
    for (Slot& slot : routes_.slots()) {
      slot.sendBacklog.remove(&op);
      slot.recvBacklog.remove(&op);
    }
    request.fail(COMM_ERR_ABORTED, "fabric: {} rank {} with tag {:#x} was cancelled", direction(op), op.peer, op.tag);
    finish(&op);
  });
  return sendsLeft;
}

void OfiTransport::finish(OfiOp* op) {
  Request* request = op->request;
  releaseOp(op);
  if (request != nullptr && --request->parts == 0) complete(*request);
}

void OfiTransport::abandon(Request& request, size_t pieces) {
  request.parts -= static_cast<int>(pieces);
  if (request.parts == 0) complete(request);
}

void OfiTransport::cancel(Request& request) {
  std::unique_lock lock(mutex_);
  if (request.done.load(std::memory_order_acquire) || request.parts == 0) return;
  // The send pieces the provider holds end (or fail) on their own.
  if (cancelPieces(request)) return;
  Deadline deadline(kCancelWait);
  auto pause = std::chrono::microseconds(1);
  while (request.parts > 0 && !deadline.expired()) {
    if (progressLocked()) continue;
    // Let other threads progress and post while the provider works on it.
    lock.unlock();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
    lock.lock();
  }
  if (request.parts == 0) return;
  pool_.forEachBusy([&](OfiOp& op) {
    if (op.request == &request) op.request = nullptr;
  });
  log::error("fabric: cancel gave up after {} s waiting for {} pieces; the provider may still use their buffers",
             kCancelWait.count(), request.parts);
  request.parts = 0;
  request.fail(COMM_ERR_ABORTED, "fabric: operation cancelled (the provider did not confirm)");
  complete(request);
}

}  // namespace

std::unique_ptr<Transport> createOfiTransport(const Options& options) {
  return std::make_unique<OfiTransport>(options);
}

}  // namespace comm::transport
