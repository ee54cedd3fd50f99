// The direct shared-memory transport (see shm_transport.h and
// shm_transport_impl.h): its segments and rings set up, sends and receives
// posted, cancels, and the Cross-Memory Attach copies of large messages.
// The eager path takes no syscall and allocates nothing: a send copies into
// the receiver's ring, progress() copies out of this rank's
// (shm_protocol.cc).
#include "transport/shm/shm_transport.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/ranges.h>

#include "common/error.h"
#include "common/log.h"
#include "common/process_exited.h"
#include "common/shm_segment.h"
#include "transport/shm/shm_transport_impl.h"

namespace comm::transport {
namespace {

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

}  // namespace

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

void ShmTransport::flush(Deadline deadline) {
  // The peer frees room in its ring when it next looks at it; a peer that
  // flushes too may wait for room in this rank's ring, which progress() frees.
  core::Backoff backoff;
  while (owesReplies() && !deadline.expired()) {
    if (progress()) {
      backoff.reset();
    } else {
      pauseOn(backoff, *this);
    }
  }
}

bool ShmTransport::owesReplies() const {
  std::lock_guard lock(mutex_);
  return std::any_of(local_.begin(), local_.end(),
                     [](const Peer* peer) { return !peer->replies.empty() && !processExited(peer->pid); });
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

std::unique_ptr<Transport> createShmTransport(const ShmOptions& options) {
  return std::make_unique<ShmTransport>(options);
}

}  // namespace comm::transport
