// The direct shared-memory transport (see shm_transport.h). Every call and
// progress() run under mutex_, except the Cross-Memory Attach copies of large
// messages, which run with it released so other threads keep the rings
// moving meanwhile. The eager path takes no syscall and allocates nothing: a
// send copies into the receiver's ring, progress() copies out of this rank's.
#include "transport/shm/shm_transport.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/ranges.h>

#include "common/error.h"
#include "common/log.h"
#include "common/shm_segment.h"
#include "transport/intrusive_list.h"
#include "transport/matching_engine.h"
#include "transport/record_pool.h"
#include "transport/shm/channel.h"
#include "transport/shm/cross_memory.h"
#include "transport/shm/shm_op.h"

namespace comm::transport {
namespace {

constexpr uint8_t kAddressVersion = 2;
// Rings shrink (to no fewer than kMinSlots slots) when a node has so many
// ranks that kMaxSlots would take more than kNodeBudget for all pairs.
constexpr uint32_t kMaxSlots = 16;
constexpr uint32_t kMinSlots = 4;
constexpr size_t kNodeBudget = size_t{32} << 20;
// Cross-Memory Attach copies a message in pieces of this size, dropping the
// lock between them: another thread may take the next piece, and a cancel
// waits for one piece at most.
constexpr size_t kCopyPiece = size_t{8} << 20;
// Early messages held for one peer when ShmOptions does not say.
constexpr size_t kDefaultUnexpectedBytes = size_t{256} << 20;
// How long cancel() sleeps while a piece it must wait for is being copied.
constexpr auto kCopyWait = std::chrono::microseconds(50);

// The per-node header at the start of every segment; the rings follow.
struct alignas(2 * kShmCacheLine) SegmentHeader {
  // Ranks that have mapped the segment; the one that completes the count
  // removes its name.
  std::atomic<uint32_t> mapped;
};

// How the rings of a node of `localRanks` ranks are cut; every rank of the
// node computes the same.
struct RingShape {
  size_t slotBytes = 0;
  uint32_t slots = 0;

  explicit RingShape(size_t localRanks) : slotBytes(shmSlotBytes(localRanks)), slots(kMaxSlots) {
    size_t fit = kNodeBudget / (localRanks * localRanks * slotBytes);
    while (slots > kMinSlots && slots > fit) slots /= 2;
  }
  size_t ringBytes() const { return shmRingBytes(slots, slotBytes); }
};

size_t segmentBytes(size_t localRanks, const RingShape& shape) {
  return sizeof(SegmentHeader) + localRanks * shape.ringBytes();
}

void* ringIn(const ShmSegment& segment, size_t index, const RingShape& shape) {
  return static_cast<char*>(segment.data()) + sizeof(SegmentHeader) + index * shape.ringBytes();
}

// What a rank publishes: where its segment is, how to probe it for
// Cross-Memory Attach, and the CPUs it may run on.
struct ShmAddress {
  pid_t pid = 0;
  uint64_t nonce = 0;
  uint64_t probe = 0;  // address of `nonce` in that process
  cpu_set_t cpus{};    // its affinity when it published this
  std::string segment;
};

cpu_set_t affinity() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) {
    for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &cpus);
  }
  return cpus;
}

template <typename T>
void put(std::vector<uint8_t>& blob, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  blob.insert(blob.end(), bytes, bytes + sizeof value);
}

std::vector<uint8_t> encodeAddress(const ShmAddress& address) {
  std::vector<uint8_t> blob{kAddressVersion};
  put(blob, static_cast<int32_t>(address.pid));
  put(blob, address.nonce);
  put(blob, address.probe);
  put(blob, address.cpus);
  blob.insert(blob.end(), address.segment.begin(), address.segment.end());
  return blob;
}

ShmAddress decodeAddress(const std::vector<uint8_t>& blob, int rank) {
  constexpr size_t kFixed = 1 + sizeof(int32_t) + 2 * sizeof(uint64_t) + sizeof(cpu_set_t);
  if (blob.size() <= kFixed || blob[0] != kAddressVersion) {
    fail(COMM_ERR_TRANSPORT, "shm: rank {}'s address ({} bytes, format {}) is not one this rank understands", rank,
         blob.size(), blob.empty() ? 0 : blob[0]);
  }
  ShmAddress address;
  int32_t pid = 0;
  const uint8_t* at = blob.data() + 1;
  std::memcpy(&pid, at, sizeof pid);
  std::memcpy(&address.nonce, at + sizeof pid, sizeof address.nonce);
  std::memcpy(&address.probe, at + sizeof pid + sizeof address.nonce, sizeof address.probe);
  std::memcpy(&address.cpus, at + sizeof pid + sizeof address.nonce + sizeof address.probe, sizeof address.cpus);
  address.pid = pid;
  address.segment.assign(blob.begin() + kFixed, blob.end());
  return address;
}

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

ShmTransport::ShmTransport(const ShmOptions& options)
    : options_(options),
      maxUnexpected_(options.maxUnexpectedBytes > 0 ? options.maxUnexpectedBytes : kDefaultUnexpectedBytes),
      pid_(getpid()),
      nonce_(randomShmNonce()),
      segmentName_(shmSegmentName(pid_, nonce_)) {
  if (options.mode == ShmMode::kOff) fail(COMM_ERR_INVALID_USAGE, "shm: direct transport created with shm off");
}

void ShmTransport::connect(int selfRank, const std::vector<PeerInfo>& peers) {
  std::lock_guard lock(mutex_);
  if (!peers_.empty()) fail(COMM_ERR_INVALID_USAGE, "shm: connect called twice");
  if (selfRank < 0 || static_cast<size_t>(selfRank) >= peers.size() || peers[selfRank].address.empty()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "shm: rank {} is not a rank of this node in a world of {}", selfRank, peers.size());
  }
  std::vector<int> ranks;
  std::vector<ShmAddress> addresses(peers.size());
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    if (!peers[rank].sameNode || peers[rank].address.empty()) continue;
    addresses[rank] = decodeAddress(peers[rank].address, static_cast<int>(rank));
    ranks.push_back(static_cast<int>(rank));
  }
  // Every rank of the node computes the same list, so the index of a rank in
  // it names its ring in every segment.
  const size_t count = ranks.size();
  const size_t self = std::find(ranks.begin(), ranks.end(), selfRank) - ranks.begin();
  const RingShape shape(count);
  const size_t bytes = segmentBytes(count, shape);
  slotPayload_ = shmSlotPayload(shape.slotBytes);
  // Streaming through the rings, both processes copying at once, moves large
  // messages faster than Cross-Memory Attach, whose kernel copy pins every
  // page (docs/dev/performance-history.md). But it needs
  // the sender running whenever the receiver is, which the node's ranks
  // cannot count on when together they may run on fewer CPUs than there are
  // of them (the union of their affinities: a batch system's or container's
  // cpuset, commrun --bind-core); Cross-Memory Attach needs the receiver only.
  cpu_set_t cores;
  CPU_ZERO(&cores);
  for (int rank : ranks) CPU_OR(&cores, &cores, &addresses[rank].cpus);
  const bool oversubscribed = CPU_COUNT(&cores) < static_cast<int>(count);
  attachLarge_ = options_.mode == ShmMode::kAttach || (options_.mode == ShmMode::kAuto && oversubscribed);

  sweepAbandonedSegments();
  try {
    own_ = ShmSegment::create(segmentName_, bytes);
  } catch (const Error& error) {
    fail(error.status(), "{} (COMM_SHM=0 falls back to libfabric's shm provider)", error.what());
  }
  mapped_.reserve(count);
  peers_.resize(peers.size());
  std::vector<int> withoutCrossMemory;
  for (size_t index = 0; index < count; ++index) {
    const int rank = ranks[index];
    const ShmAddress& address = addresses[rank];
    ShmSegment* theirs = &own_;
    if (index != self) {
      theirs = &mapped_.emplace_back(
          // The world publishes each rank's address under the store key addr/<rank>.
          ShmSegment::open(address.segment, bytes, address.pid, fmt::format("rank {}", rank),
                           fmt::format("store key addr/{}", rank), options_.connectTimeout));
    }
    auto* header = static_cast<SegmentHeader*>(theirs->data());
    if (header->mapped.fetch_add(1, std::memory_order_acq_rel) + 1 == count) theirs->unlink();

    Peer& peer = peers_[rank];
    peer.rank = rank;
    peer.pid = address.pid;
    peer.out = ShmProducer(ringIn(*theirs, self, shape), shape.slots, shape.slotBytes);
    peer.in = ShmConsumer(ringIn(own_, index, shape), shape.slots, shape.slotBytes);
    peer.out.touch();
    peer.in.touch();
    // Probed even where messages do not use it: algorithms may read a
    // rank's input in place (CollectiveContext::readMemoryOf).
    if (options_.mode != ShmMode::kCopy) {
      int refused = probeCrossMemory(address.pid, address.probe, address.nonce);
      peer.crossMemory = refused == 0;
      if (refused != 0) {
        withoutCrossMemory.push_back(rank);
        log::debug("shm: cross-memory attach to rank {} (pid {}) refused: {}", rank, address.pid,
                   std::strerror(refused));
      }
    }
    local_.push_back(&peer);
  }
  log::info("shm: direct shared memory to ranks {} ({} slots of {} bytes per pair)", fmt::join(ranks, ","), shape.slots,
            shape.slotBytes);
  if (!attachLarge_) {
    log::info("shm: large messages streamed through shared memory{}",
              options_.mode == ShmMode::kCopy ? " (COMM_SHM=copy)" : "");
  } else if (!withoutCrossMemory.empty()) {
    log::info(
        "shm: the kernel refuses cross-memory attach to ranks {}; large messages from them are streamed "
        "through shared memory",
        fmt::join(withoutCrossMemory, ","));
  } else {
    log::info("shm: large messages read by cross-memory attach ({})",
              options_.mode == ShmMode::kAttach
                  ? std::string("COMM_SHM=attach")
                  : fmt::format("the node's {} ranks may run on {} CPUs", count, CPU_COUNT(&cores)));
  }
}

ShmTransport::Peer& ShmTransport::peerFor(int rank, const char* what) const {
  if (rank < 0 || static_cast<size_t>(rank) >= peers_.size() || peers_[rank].rank < 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "shm: cannot {} rank {}: it is not connected over shared memory", what, rank);
  }
  return peers_[rank];
}

void ShmTransport::activate(Peer& peer) {
  if (peer.active) return;
  peer.active = true;
  active_.push_back(&peer);
}

ShmOp* ShmTransport::newOp(Request& request, int peer, uint64_t tag, const void* buffer, size_t size,
                           ShmOpState state) {
  ShmOp* op = ops_.acquire();
  *op = ShmOp{};
  op->request = &request;
  op->buffer = static_cast<char*>(const_cast<void*>(buffer));
  op->size = size;
  op->tag = tag;
  op->peer = peer;
  op->state = state;
  return op;
}

void ShmTransport::send(int rank, uint64_t tag, const void* data, size_t size, Request& request) {
  std::lock_guard lock(mutex_);
  Peer& peer = peerFor(rank, "send to");
  request.restart();
  activate(peer);
  if (size <= slotPayload_ && peer.backlog.empty()) {
    if (ShmSlot* slot = peer.out.claim()) {
      slot->kind = ShmKind::kEager;
      slot->tagOrToken = tag;
      slot->size = size;
      if (size != 0) std::memcpy(shmPayload(slot), data, size);
      peer.out.publish(slot);
      complete(request);
      return;
    }
  }
  ShmOp* op = newOp(request, rank, tag, data, size, ShmOpState::kQueued);
  peer.backlog.pushBack(op);
  pump(peer);
}

void ShmTransport::recv(int rank, uint64_t tag, void* data, size_t size, Request& request) {
  std::lock_guard lock(mutex_);
  Peer& peer = peerFor(rank, "receive from");
  request.restart();
  activate(peer);
  if (ShmArrival* arrival = peer.matching.findArrival(tag)) {
    peer.matching.forget(arrival);
    if (arrival->rendezvous) {
      match(peer, newOp(request, rank, tag, data, size, ShmOpState::kPosted), arrival->size, arrival->senderToken,
            arrival->address);
    } else {
      receiveWhole(request, "shm", peer.rank, tag, data, size, arrival->data.data(), arrival->size);
      complete(request);
    }
    arrivals_.release(arrival);
    return;
  }
  peer.matching.post(newOp(request, rank, tag, data, size, ShmOpState::kPosted));
}

bool ShmTransport::progress() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  // Whoever holds the lock moves every ring, so returning is as good as waiting.
  if (!lock.owns_lock()) return false;
  const uint64_t before = completions_;
  // A slot moved counts as progress: a large message streamed through the
  // rings completes only at its end, and its waiters must keep polling
  // rather than nap meanwhile.
  uint64_t moved = 0;
  for (Peer* peer : active_) {
    moved += drain(*peer);
    moved += pump(*peer);
  }
  // Peers this rank has not talked to yet get one look per call, so their
  // messages never sit in a full ring unnoticed.
  if (!local_.empty()) {
    if (++sweep_ >= local_.size()) sweep_ = 0;
    Peer& quiet = *local_[sweep_];
    if (!quiet.active && quiet.in.peek() != nullptr) {
      activate(quiet);
      moved += drain(quiet);
    }
  }
  if (!copies_.empty()) copy(lock);
  return moved != 0 || completions_ != before;
}

uint64_t ShmTransport::drain(Peer& peer) {
  // At most one ring's worth per call: a fast sender cannot keep us here.
  for (uint64_t n = 0; n < kMaxSlots; ++n) {
    const ShmSlot* slot = peer.in.peek();
    if (slot == nullptr) return n;
    switch (slot->kind) {
      case ShmKind::kEager:
        if (!onEager(peer, *slot)) return n;
        break;
      case ShmKind::kRequestToSend:
        if (!onRequestToSend(peer, *slot)) return n;
        break;
      case ShmKind::kClearToSend: {
        ShmClearToSend clear;
        std::memcpy(&clear, shmPayload(slot), sizeof clear);
        ShmOp* op = ShmOp::fromToken(slot->tagOrToken);
        op->remoteToken = clear.receiverToken;
        op->state = ShmOpState::kStreaming;
        peer.streaming.pushBack(op);
        break;
      }
      case ShmKind::kChunk: onChunk(peer, *slot); break;
      case ShmKind::kFinish: onFinish(peer, *slot); break;
      default:
        fail(COMM_ERR_INTERNAL, "shm: rank {} wrote a slot of unknown kind {}", peer.rank,
             static_cast<uint32_t>(slot->kind));
    }
    peer.in.release();
  }
  return kMaxSlots;
}

bool ShmTransport::admit(Peer& peer, size_t cost) {
  if (!peer.matching.admits(cost, maxUnexpected_)) {
    if (!peer.heldBack) {
      log::debug(
          "shm: rank {} sent more messages before their receives than this rank holds for one peer ({} bytes); "
          "its ring is left unread until receives take some",
          peer.rank, maxUnexpected_);
      peer.heldBack = true;
    }
    return false;
  }
  peer.heldBack = false;
  return true;
}

bool ShmTransport::onEager(Peer& peer, const ShmSlot& slot) {
  const uint64_t tag = slot.tagOrToken;
  if (ShmOp* op = peer.matching.takeReceive(tag)) {
    receiveWhole(*op->request, "shm", peer.rank, tag, op->buffer, op->size, shmPayload(&slot), slot.size);
    complete(*op->request);
    ops_.release(op);
    return true;
  }
  if (!admit(peer, Matching::cost(slot.size, false))) return false;
  ShmArrival* arrival = arrivals_.acquire();
  arrival->tag = tag;
  arrival->size = slot.size;
  arrival->rendezvous = false;
  arrival->data.assign(shmPayload(&slot), shmPayload(&slot) + slot.size);
  peer.matching.hold(arrival);
  return true;
}

bool ShmTransport::onRequestToSend(Peer& peer, const ShmSlot& slot) {
  ShmRendezvous rendezvous;
  std::memcpy(&rendezvous, shmPayload(&slot), sizeof rendezvous);
  const uint64_t tag = slot.tagOrToken;
  if (ShmOp* op = peer.matching.takeReceive(tag)) {
    match(peer, op, slot.size, rendezvous.senderToken, rendezvous.address);
    return true;
  }
  if (!admit(peer, Matching::cost(slot.size, true))) return false;
  ShmArrival* arrival = arrivals_.acquire();
  arrival->tag = tag;
  arrival->size = slot.size;
  arrival->rendezvous = true;
  arrival->senderToken = rendezvous.senderToken;
  arrival->address = rendezvous.address;
  peer.matching.hold(arrival);
  return true;
}

void ShmTransport::onChunk(Peer& peer, const ShmSlot& slot) {
  ShmOp* op = ShmOp::fromToken(slot.tagOrToken);
  if (op->state == ShmOpState::kReceiving) std::memcpy(op->buffer + op->done, shmPayload(&slot), slot.size);
  op->done += slot.size;
  if (op->done < op->size) return;
  peer.receiving.remove(op);
  if (op->state == ShmOpState::kReceiving) {
    op->request->bytes = op->size;
    complete(*op->request);
  }
  ops_.release(op);
}

void ShmTransport::onFinish(Peer& peer, const ShmSlot& slot) {
  ShmOp* op = ShmOp::fromToken(slot.tagOrToken);
  if (slot.status != COMM_OK) {
    op->request->fail(static_cast<comm_status_t>(slot.status),
                      "shm: rank {} could not read the message with tag {:#x} ({} bytes) from this rank's memory",
                      peer.rank, op->tag, op->size);
  }
  complete(*op->request);
  ops_.release(op);
}

// A receive meets the request-to-send of a `size`-byte message.
void ShmTransport::match(Peer& peer, ShmOp* op, size_t size, uint64_t senderToken, uint64_t address) {
  op->remoteToken = senderToken;
  op->remoteAddress = address;
  if (size != op->size) {
    // The sender's part is over: a receive took its message.
    reply(peer, ShmKind::kFinish, senderToken, 0, COMM_OK);
    failMismatch(*op->request, "shm", peer.rank, op->tag, size, op->size);
    complete(*op->request);
    ops_.release(op);
  } else if (peer.crossMemory && attachLarge_) {
    op->state = ShmOpState::kCopying;
    copies_.pushBack(op);
  } else {
    op->state = ShmOpState::kReceiving;
    peer.receiving.pushBack(op);
    reply(peer, ShmKind::kClearToSend, senderToken, op->token(), COMM_OK);
  }
}

uint64_t ShmTransport::pump(Peer& peer) {
  uint64_t moved = 0;
  while (!peer.replies.empty()) {
    ShmSlot* slot = peer.out.claim();
    if (slot == nullptr) return moved;
    write(peer.out, slot, peer.replies.front());
    peer.replies.pop_front();
    ++moved;
  }
  while (!peer.backlog.empty()) {
    ShmOp* op = peer.backlog.front();
    if (!postSend(peer, op)) return moved;
    ++moved;
  }
  while (!peer.streaming.empty()) {
    ShmSlot* slot = peer.out.claim();
    if (slot == nullptr) return moved;
    ShmOp* op = peer.streaming.front();
    const size_t bytes = std::min(slotPayload_, op->size - op->done);
    slot->kind = ShmKind::kChunk;
    slot->tagOrToken = op->remoteToken;
    slot->size = bytes;
    std::memcpy(shmPayload(slot), op->buffer + op->done, bytes);
    peer.out.publish(slot);
    ++moved;
    op->done += bytes;
    if (op->done == op->size) {
      peer.streaming.remove(op);
      complete(*op->request);
      ops_.release(op);
    }
  }
  return moved;
}

// Puts the first send of the backlog into the ring; false while it is full.
bool ShmTransport::postSend(Peer& peer, ShmOp* op) {
  ShmSlot* slot = peer.out.claim();
  if (slot == nullptr) return false;
  peer.backlog.remove(op);
  slot->tagOrToken = op->tag;
  slot->size = op->size;
  if (op->size <= slotPayload_) {
    slot->kind = ShmKind::kEager;
    if (op->size != 0) std::memcpy(shmPayload(slot), op->buffer, op->size);
    peer.out.publish(slot);
    complete(*op->request);
    ops_.release(op);
    return true;
  }
  slot->kind = ShmKind::kRequestToSend;
  const ShmRendezvous rendezvous{op->token(), reinterpret_cast<uint64_t>(op->buffer)};
  std::memcpy(shmPayload(slot), &rendezvous, sizeof rendezvous);
  op->state = ShmOpState::kAnnounced;
  peer.out.publish(slot);
  return true;
}

void ShmTransport::reply(Peer& peer, ShmKind kind, uint64_t token, uint64_t receiverToken, int32_t status) {
  const Reply message{kind, token, receiverToken, status};
  if (peer.replies.empty()) {
    if (ShmSlot* slot = peer.out.claim()) return write(peer.out, slot, message);
  }
  peer.replies.push_back(message);
}

void ShmTransport::write(ShmProducer& ring, ShmSlot* slot, const Reply& reply) {
  slot->kind = reply.kind;
  slot->tagOrToken = reply.token;
  slot->size = 0;
  slot->status = reply.status;
  const ShmClearToSend clear{reply.receiverToken};
  std::memcpy(shmPayload(slot), &clear, sizeof clear);
  ring.publish(slot);
}

// Copies pieces of matched messages out of their senders' memory until none
// is left unclaimed; true when it copied anything.
bool ShmTransport::copy(std::unique_lock<std::mutex>& lock) {
  bool copied = false;
  for (;;) {
    ShmOp* op = copies_.find([](const ShmOp& o) { return o.claimed < o.size && !o.cancelled; });
    if (op == nullptr) return copied;
    const size_t offset = op->claimed;
    const size_t bytes = std::min(kCopyPiece, op->size - offset);
    const pid_t pid = peers_[op->peer].pid;
    op->claimed += bytes;
    ++op->copiers;
    lock.unlock();
    const int error = readCrossMemory(pid, op->buffer + offset, op->remoteAddress + offset, bytes);
    lock.lock();
    copied = true;
    --op->copiers;
    if (error != 0) {
      op->failure = error;
      op->claimed = op->size;
    } else {
      op->done += bytes;
    }
    // A cancel waiting for this piece takes over from here.
    if (op->copiers == 0 && !op->cancelled && (op->failure != 0 || op->done == op->size)) finishCopy(op);
  }
}

void ShmTransport::finishCopy(ShmOp* op) {
  copies_.remove(op);
  Peer& peer = peers_[op->peer];
  Request& request = *op->request;
  if (op->failure == 0) {
    request.bytes = op->size;
    reply(peer, ShmKind::kFinish, op->remoteToken, 0, COMM_OK);
  } else if (op->failure == ESRCH) {
    request.fail(COMM_ERR_REMOTE, "shm: rank {} (pid {}) exited while its message with tag {:#x} was read", peer.rank,
                 peer.pid, op->tag);
  } else {
    reply(peer, ShmKind::kFinish, op->remoteToken, 0, COMM_ERR_TRANSPORT);
    request.fail(COMM_ERR_TRANSPORT, "shm: reading the message with tag {:#x} ({} bytes) from rank {} failed: {}",
                 op->tag, op->size, peer.rank, std::strerror(op->failure));
  }
  complete(request);
  ops_.release(op);
}

ShmOp* ShmTransport::findCancellable(const Request& request) {
  auto mine = [&request](const ShmOp& op) { return op.request == &request; };
  if (ShmOp* op = copies_.find(mine)) return op;
  for (Peer* peer : local_) {
    if (ShmOp* op = peer->matching.receiveOf(request)) return op;
    for (IntrusiveList<ShmOp>* list : {&peer->receiving, &peer->backlog}) {
      if (ShmOp* op = list->find(mine)) return op;
    }
  }
  return nullptr;
}

void ShmTransport::cancel(Request& request) {
  std::unique_lock lock(mutex_);
  if (request.done.load(std::memory_order_acquire)) return;
  ShmOp* op = findCancellable(request);
  // Sends already announced to the receiver are past withdrawing: it may be
  // reading them this moment.
  if (op == nullptr) return;
  Peer& peer = peers_[op->peer];
  const char* what = op->state == ShmOpState::kQueued ? "send to" : "receive from";
  const uint64_t tag = op->tag;
  if (op->state == ShmOpState::kCopying) {
    // Pieces in flight write into the buffer: wait for them (a local copy,
    // not the peer).
    op->cancelled = true;
    while (op->copiers > 0) {
      lock.unlock();
      std::this_thread::sleep_for(kCopyWait);
      lock.lock();
    }
    if (op->failure == 0 && op->done == op->size) return finishCopy(op);
    copies_.remove(op);
    // The sender's part is over either way.
    reply(peer, ShmKind::kFinish, op->remoteToken, 0, COMM_OK);
  } else if (op->state == ShmOpState::kReceiving) {
    // The sender streams the rest regardless; it is read and dropped.
    op->state = ShmOpState::kDraining;
    op->request = nullptr;
    op = nullptr;
  } else if (op->state == ShmOpState::kQueued) {
    peer.backlog.remove(op);
  } else {
    peer.matching.unpost(op);
  }
  if (op != nullptr) ops_.release(op);
  request.fail(COMM_ERR_ABORTED, "shm: {} rank {} with tag {:#x} was cancelled", what, peer.rank, tag);
  complete(request);
}

}  // namespace

ShmMode parseShmMode(std::string_view value) {
  if (value == "1") return ShmMode::kAuto;
  if (value == "0") return ShmMode::kOff;
  if (value == "attach") return ShmMode::kAttach;
  if (value == "copy") return ShmMode::kCopy;
  fail(COMM_ERR_INVALID_ARGUMENT, "COMM_SHM='{}' is not 1, 0, attach or copy", value);
}

std::unique_ptr<Transport> createShmTransport(const ShmOptions& options) {
  return std::make_unique<ShmTransport>(options);
}

}  // namespace comm::transport
