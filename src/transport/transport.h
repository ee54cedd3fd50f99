// The engine's view of the network: tagged, reliable, ordered messages to
// peers addressed by world rank. Implementations: libfabric (ofi/),
// direct shared memory (shm/), comm's own TCP (tcp/), ranks that are
// threads of one process (threads/).
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "comm.h"
#include "common/backoff.h"

namespace comm::transport {

// One outstanding send or receive. The caller owns it and keeps it alive (and
// at the same address) until `done` is true. The transport writes the other
// fields before it stores done = true (release order).
struct Request {
  std::atomic<bool> done{false};
  comm_status_t status = COMM_OK;  // COMM_ERR_MISMATCH: size differs; COMM_ERR_REMOTE: peer gone...
  std::string error;               // the cause in words when status != COMM_OK
  size_t bytes = 0;                // bytes received, for receives
  int parts = 0;                   // transport bookkeeping: chunks still in flight

  // What a transport calls on a request, the same in every transport:
  //
  // A new operation starts: no status, nothing received, not done.
  void restart(int pieces = 0) {
    status = COMM_OK;
    error.clear();
    bytes = 0;
    parts = pieces;
    done.store(false, std::memory_order_relaxed);
  }
  // The first failure is the cause; later ones are its consequences.
  template <typename... Args>
  void fail(comm_status_t failure, fmt::format_string<Args...> format, Args&&... args) {
    if (status != COMM_OK) return;
    status = failure;
    error = fmt::format(format, std::forward<Args>(args)...);
  }
  // The fields above are final; whoever sees done sees them (release order).
  void markDone() { done.store(true, std::memory_order_release); }
};

struct PeerInfo {
  std::vector<uint8_t> address;  // what the peer's localAddress() returned
  bool sameNode = false;         // the peer shares this rank's node (shared memory reachable)
};

class Transport {
 public:
  virtual ~Transport() = default;

  // This rank's endpoint names, an opaque blob to publish through the store.
  virtual std::vector<uint8_t> localAddress() const = 0;
  // Learn every rank's address (peers[selfRank] is this rank). Called once.
  virtual void connect(int selfRank, const std::vector<PeerInfo>& peers) = 0;

  // Start a send/receive of `size` bytes (0 allowed, any size up to at least
  // 2^31 + some; larger messages are split into chunks internally). Tags are
  // matched exactly; all 64 bits are carried. Messages from one peer with one
  // tag match receives in the order both were posted. A receive completes
  // with COMM_ERR_MISMATCH when the message is not exactly `size` bytes; a
  // longer message that a transport cut into chunks (OfiOptions::maxChunkBytes)
  // leaves its remaining chunks to the next receives of its tag, and a
  // receive cut into chunks that meets a shorter message may hand its
  // unused chunks the next message of its tag when that arrives before the
  // transport withdraws them (libfabric matches each chunk on its own).
  // Throws comm::Error (COMM_ERR_TRANSPORT) when the operation cannot be posted.
  virtual void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) = 0;
  virtual void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) = 0;

  // Withdraw a posted receive or send that has not completed, because its
  // caller gives up and will free or reuse the buffer. A receive: on return
  // it is done (status COMM_ERR_ABORTED unless it completed meanwhile) and
  // the transport will never touch its buffer again. A send: the same where
  // the transport owns the wire (comm's tcp and shared memory), which
  // either still delivers the message from a copy or withdraws it so that
  // the peer's receive fails; libfabric cannot take back a send the
  // provider holds, so there only pieces not yet handed to it are dropped
  // and the provider may still read the rest (rxm reads a rendezvous send
  // only when a receive matches it, which a withdrawn receive never does).
  virtual void cancel(Request& request) = 0;

  // Whether messages between the live ranks keep flowing after a peer's
  // death. libfabric's tcp;ofi_rxm may stop delivering them on its
  // endpoints, so communicators that go on after a death take new ones.
  virtual bool survivesPeerDeath() const { return true; }

  // Whether a transfer in flight moves only while progress() is called, so a
  // waiter should keep polling (yielding the core) rather than sleep.
  virtual bool busy() const { return false; }

  // Blocks for up to `limit` until progress() may have something to do: a
  // socket that a transfer in flight or an awaited message uses turned
  // readable or writable. False, at once, when this transport cannot wait
  // on the kernel (shared memory, libfabric's polled providers).
  virtual bool waitReady(std::chrono::microseconds /*limit*/) { return false; }

  // Reap completions without blocking. Thread-safe; returns true when any
  // request completed.
  virtual bool progress() = 0;

  // Called once, before the transport closes: hands the peers what this
  // rank still owes them though no request of its own waits for it (over
  // shared memory, a receiver's word that it has read a message, queued
  // behind a full ring). A peer waiting for that word would otherwise see
  // this rank exit before it and fail. Gives up on a peer that has exited,
  // and at `deadline`.
  virtual void flush(Deadline /*deadline*/) {}

  // "shm", "tcp;ofi_rxm"... the provider that carries traffic to `peer`, for
  // logs and messages. Code above transport/ asks the capabilities below,
  // never compares names.
  virtual std::string providerFor(int peer) const = 0;

  // What the engine may rely on for `peer` (another rank; called after
  // connect):
  //
  // comm's own shared-memory path serves it, so the two ranks can also meet
  // on shared pages the engine maps itself (the node board).
  virtual bool directSharedMemory(int /*peer*/) const { return false; }
  // The engine may copy from the memory of `peer` (on this node) with
  // Cross-Memory Attach: false where it may not (another node, the kernel
  // refuses, COMM_SHM=copy or 0).
  virtual bool mayReadMemoryOf(int /*peer*/) const { return false; }
  // Copies `bytes` at `remote` in `peer`'s memory into `local`: 0, or the
  // errno (ESRCH: it has exited; EPERM: mayReadMemoryOf is false).
  virtual int readMemoryOf(int /*peer*/, void* /*local*/, uint64_t /*remote*/, size_t /*bytes*/) const { return EPERM; }
  // A large message between two ranks on the same node (or on different
  // ones) moves faster when the caller posts it as a stream of chunks, each
  // a message of its own, than whole: the transport does not cut it itself,
  // and a chunk can be forwarded while the next arrives. Asked of a kind of
  // pair, not of a peer, so that every rank can answer for pairs it is not
  // part of: both ends of a message must agree (core::Communicator).
  virtual bool wantsChunkedMessages(bool /*sameNode*/) const { return false; }
};

// A waiter's pause between looks at `transport` that found nothing to do.
inline void pauseOn(core::Backoff& backoff, Transport& transport) {
  backoff.pause(transport.busy(), [&transport](std::chrono::microseconds limit) { return transport.waitReady(limit); });
}

}  // namespace comm::transport
