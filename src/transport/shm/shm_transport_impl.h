// The direct shared-memory transport's state (the class behind
// createShmTransport), shared by the files that make it up:
// shm_transport.cc sets up the segments and rings, posts, cancels and
// copies by Cross-Memory Attach; shm_protocol.cc moves the messages through
// the rings (shm_protocol.h says what they are). Every call and progress()
// run under mutex_, except the Cross-Memory Attach copies of large
// messages, which run with it released so other threads keep the rings
// moving meanwhile.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "common/shm_segment.h"
#include "transport/intrusive_list.h"
#include "transport/matching_engine.h"
#include "transport/record_pool.h"
#include "transport/shm/channel.h"
#include "transport/shm/cross_memory.h"
#include "transport/shm/shm_address.h"
#include "transport/shm/shm_op.h"
#include "transport/shm/shm_protocol.h"
#include "transport/shm/shm_transport.h"

namespace comm::transport {

// Rings shrink (to no fewer than kMinSlots slots) when a node has so many
// ranks that kMaxSlots would take more than kNodeBudget for all pairs.
inline constexpr uint32_t kMaxSlots = 16;
inline constexpr uint32_t kMinSlots = 4;
inline constexpr size_t kNodeBudget = size_t{32} << 20;

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(const ShmOptions& options);

  std::vector<uint8_t> localAddress() const override {
    return encodeAddress({pid_, nonce_, reinterpret_cast<uint64_t>(&nonce_), affinity(), segmentName_});
  }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override;
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override;
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override;
  void cancel(Request& request) override;
  bool progress() override;
  void flush(Deadline deadline) override;
  std::string providerFor(int peer) const override {
    std::lock_guard lock(mutex_);
    peerFor(peer, "route to");
    return kShmDirectProvider;
  }
  bool directSharedMemory(int peer) const override {
    std::lock_guard lock(mutex_);
    peerFor(peer, "route to");
    return true;
  }
  bool mayReadMemoryOf(int peer) const override {
    std::lock_guard lock(mutex_);
    return peerFor(peer, "read the memory of").crossMemory;
  }
  int readMemoryOf(int peer, void* local, uint64_t remote, size_t bytes) const override {
    pid_t pid = 0;
    {
      std::lock_guard lock(mutex_);
      const Peer& p = peerFor(peer, "read the memory of");
      if (!p.crossMemory) return EPERM;
      pid = p.pid;
    }
    return readCrossMemory(pid, local, remote, bytes);
  }

 private:
  // A control message waiting for room in a full ring.
  struct Reply {
    ShmKind kind;
    uint64_t token;
    uint64_t receiverToken;
    int32_t status;
  };

  using Matching = MatchingEngine<ShmOp, ShmArrival>;

  // Everything about one rank on the node, this one included.
  struct Peer {
    int rank = -1;
    pid_t pid = 0;
    bool crossMemory = false;        // its memory is readable by Cross-Memory Attach
    bool active = false;             // in active_: progress() polls its ring
    ShmProducer out;                 // this rank -> peer, in the peer's segment
    ShmConsumer in;                  // peer -> this rank, in this rank's segment
    Matching matching;               // its messages and this rank's receives for them
    bool heldBack = false;           // its ring is left unread until receives take some arrivals
    IntrusiveList<ShmOp> backlog;    // sends waiting for ring space, in posting order
    IntrusiveList<ShmOp> streaming;  // sends cleared to stream, in clearing order
    IntrusiveList<ShmOp> receiving;  // receives taking chunks
    std::deque<Reply> replies;
  };

  Peer& peerFor(int rank, const char* what) const;
  void activate(Peer& peer);
  ShmOp* newOp(Request& request, int peer, uint64_t tag, const void* buffer, size_t size, ShmOpState state);

  // Both return how many slots they moved.
  uint64_t drain(Peer& peer);
  // Both return false, consuming nothing, when the peer's arrivals already
  // hold as much as maxUnexpected_ allows.
  bool onEager(Peer& peer, const ShmSlot& slot);
  bool onRequestToSend(Peer& peer, const ShmSlot& slot);
  bool admit(Peer& peer, size_t cost);
  void onChunk(Peer& peer, const ShmSlot& slot);
  void onFinish(Peer& peer, const ShmSlot& slot);
  void match(Peer& peer, ShmOp* receive, size_t size, uint64_t senderToken, uint64_t address);

  uint64_t pump(Peer& peer);
  // Whether a reply waits for room in the ring of a peer that is still there.
  bool owesReplies() const;
  bool postSend(Peer& peer, ShmOp* op);
  void reply(Peer& peer, ShmKind kind, uint64_t token, uint64_t receiverToken, int32_t status);
  static void write(ShmProducer& ring, ShmSlot* slot, const Reply& reply);

  bool copy(std::unique_lock<std::mutex>& lock);
  void finishCopy(ShmOp* op);
  ShmOp* findCancellable(const Request& request);

  void complete(Request& request, comm_status_t status = COMM_OK) {
    if (request.status == COMM_OK) request.status = status;
    request.markDone();
    ++completions_;
  }

  mutable std::mutex mutex_;
  const ShmOptions options_;
  const size_t maxUnexpected_;
  const pid_t pid_;
  const uint64_t nonce_;  // peers read it to probe Cross-Memory Attach
  const std::string segmentName_;
  ShmSegment own_;
  std::vector<ShmSegment> mapped_;
  mutable std::vector<Peer> peers_;  // by world rank; rank < 0 for peers elsewhere
  std::vector<Peer*> local_;
  std::vector<Peer*> active_;
  size_t sweep_ = 0;
  IntrusiveList<ShmOp> copies_;
  RecordPool<ShmOp> ops_;
  RecordPool<ShmArrival> arrivals_;
  uint64_t completions_ = 0;
  size_t slotPayload_ = 0;    // the largest message (or chunk) a slot carries
  bool attachLarge_ = false;  // messages too large for a slot go by Cross-Memory Attach
};

}  // namespace comm::transport
