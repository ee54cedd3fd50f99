#include "core/collective_context.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/backoff.h"
#include "common/dtype.h"
#include "common/error.h"
#include "core/communicator.h"
#include "core/tags.h"

namespace comm::core {
namespace {

// A collective slower than this starts listening for failure notices.
constexpr auto kNoticeDelay = std::chrono::milliseconds(100);
// How long a rank whose transport failed listens for a notice its peer sent
// before that failure: it is in the queue already, behind at most the
// messages of this collective.
constexpr auto kNoticeGrace = std::chrono::milliseconds(50);
// Looks at the board before the first clock read: a peer running on a core
// of its own publishes within a few hundred nanoseconds.
constexpr int kBoardSpins = 32;
// How long a rank holds its signature for the next node's first rank
// while it waits for something else (releaseSignature).
constexpr auto kSignatureHold = std::chrono::milliseconds(1);
constexpr uint32_t kSignatureStep = 0;
constexpr uint32_t kNoticeStep = 1;

// The mismatch check's edges at one rank: every rank but the root receives
// the signature of the rank before it and compares. The edges make a
// spanning tree, so ranks that disagree are joined by some edge and its
// receiver sees it. Each node's ranks form a chain, and the nodes' first
// ranks a chain of their own: only H - 1 signatures cross between nodes,
// each from one node's first rank to the next's, the ranks that also
// carry the messages of the small collectives across nodes
// (NodeLayout::leaders): a signature then shares a connection, and often a
// read, with the data. A ring over the ranks in rank order took at least H
// crossings, and sent a message across from ranks that have nothing else
// to send there.
struct SignatureEdges {
  int from = -1;         // -1: the root
  int to[2] = {-1, -1};  // the next on this node; the next node's first rank
};

SignatureEdges signatureEdges(const NodeLayout& nodes, int rank) {
  const int node = nodes.nodeOf[rank];
  const int place = nodes.indexOnNode[rank];
  const std::vector<int>& mates = nodes.members[node];
  SignatureEdges edges;
  if (place > 0) {
    edges.from = mates[place - 1];
  } else if (node > 0) {
    edges.from = nodes.members[node - 1][0];
  }
  if (place + 1 < static_cast<int>(mates.size())) edges.to[0] = mates[place + 1];
  if (place == 0 && node + 1 < nodes.count()) edges.to[1] = nodes.members[node + 1][0];
  return edges;
}

}  // namespace

CollectiveContext::CollectiveContext(Communicator& comm, uint32_t sequence, const Signature& signature)
    : comm_(comm),
      sequence_(sequence),
      signature_(signature),
      rank_(comm.rank()),
      size_(comm.size()),
      viewRank_(rank_),
      viewSize_(size_),
      requests_(comm.collectiveBuffers().requests),
      pending_(comm.collectiveBuffers().pending),
      board_(comm.board()),
      chunkedMessages_(comm.chunkedMessages()) {
  // Checked up front: a collective that needs no wait (one rank, or peers
  // that already published on the board) would otherwise never look.
  if (comm_.aborted()) fail(COMM_ERR_ABORTED, "{}: the communicator was aborted", what());
  flight_ = comm_.flight().startCollective(sequence_, signature_);
  if (size_ == 1) return;
  if (board_ != nullptr) {  // announced before the first message or wait
    signatureChecked_ = false;
    lane_ = NodeBoard::laneOf(signature_, size_);
    return;
  }
  const SignatureEdges edges = signatureEdges(comm_.nodes(), rank_);
  if (edges.to[0] >= 0) {
    transport::Request& out = requests_.emplace_back();
    sendSignature(edges.to[0], out);
    pending_.push_back({&out, edges.to[0], false});
  }
  if (edges.to[1] >= 0) {  // held: see releaseSignature
    transport::Request& held = requests_.emplace_back();
    held.markDone();  // nothing to wait for until it is sent
    heldSignatureTo_ = edges.to[1];
    heldSignatureSlot_ = pending_.size();
    pending_.push_back({&held, heldSignatureTo_, false});
  }
  if (edges.from >= 0) {  // the tree's root has nothing to compare with
    signatureChecked_ = false;
    signatureFrom_ = edges.from;
    receiveSignature();
  }
  signatureSlots_ = pending_.size();
}

uint64_t CollectiveContext::signatureTag() const {
  return tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kSignatureStep);
}

void CollectiveContext::sendSignature(int to, transport::Request& out) {
  comm_.send(to, signatureTag(), &signature_, sizeof(signature_), out);
}

void CollectiveContext::releaseSignature() {
  const int to = std::exchange(heldSignatureTo_, -1);
  transport::Request& out = *pending_[heldSignatureSlot_].request;
  try {
    sendSignature(to, out);
  } catch (...) {
    out.markDone();  // never posted: nothing for a wait or a withdrawal to find
    throw;
  }
}

void CollectiveContext::receiveSignature() {
  transport::Request& in = requests_.emplace_back();
  comm_.recv(signatureFrom_, signatureTag(), &theirSignature_, sizeof(theirSignature_), in);
  signatureRecvSlot_ = pending_.size();
  pending_.push_back({&in, signatureFrom_, true});
}

CollectiveContext::~CollectiveContext() {
  if (!finished_) comm_.flight().finish(flight_, false);
  withdrawNoticeReceives();
  if (!pending_.empty()) comm_.abandon(std::move(requests_), pending_);
  // Capacity stays for the next collective.
  pending_.clear();
  if (!requests_.empty()) requests_.clear();  // not free even when empty
}

char* CollectiveContext::staging() {
  std::unique_ptr<char[]>& area = comm_.collectiveBuffers().staging;
  if (!area) area = std::make_unique_for_overwrite<char[]>(kStagingBytes);
  return area.get();
}

char* CollectiveContext::scratch(Scratch area, size_t bytes) {
  CollectiveBuffers::ScratchArea& kept = comm_.collectiveBuffers().scratch[static_cast<size_t>(area)];
  if (kept.bytes < bytes) {
    kept.data.reset();  // first: the old and the new one together could double the peak
    kept.bytes = 0;
    kept.data = std::make_unique_for_overwrite<char[]>(bytes);
    kept.bytes = bytes;
  }
  return kept.data.get();
}

CollectiveContext::Subgroup::Subgroup(CollectiveContext& ctx, std::span<const int> members, uint32_t firstStep)
    : ctx_(ctx) {
  auto self = std::find(members.begin(), members.end(), ctx.rank_);
  if (!ctx.members_.empty() || self == members.end()) {
    fail(COMM_ERR_INTERNAL, "{}: a subgroup must be opened alone and hold this rank", ctx.what());
  }
  ctx.members_ = members;
  ctx.firstStep_ = firstStep;
  ctx.viewRank_ = static_cast<int>(self - members.begin());
  ctx.viewSize_ = static_cast<int>(members.size());
}

CollectiveContext::Subgroup::~Subgroup() {
  ctx_.members_ = {};
  ctx_.firstStep_ = 0;
  ctx_.viewRank_ = ctx_.rank_;
  ctx_.viewSize_ = ctx_.size_;
}

CollectiveContext::Segment::Segment(CollectiveContext& ctx, size_t index) : ctx_(ctx) {
  if (ctx.inSegment_ || !ctx.members_.empty() || index >= kMaxSegments) {
    fail(COMM_ERR_INTERNAL, "{}: part {} must be opened alone, outside subgroups, and below {}", ctx.what(), index,
         kMaxSegments);
  }
  ctx.inSegment_ = true;
  ctx.segmentFirstStep_ = static_cast<uint32_t>(index) * kSegmentSteps;
}

CollectiveContext::Segment::~Segment() {
  ctx_.inSegment_ = false;
  ctx_.segmentFirstStep_ = 0;
}

RequestId CollectiveContext::post(bool isRecv, int peer, uint32_t step, void* data, size_t size) {
  if (!members_.empty()) {
    peer = members_[peer];
    step += firstStep_;
  }
  step += segmentFirstStep_;
  announce();
  transport::Request& request = requests_.emplace_back();
  uint64_t tag = tags::make(comm_.id(), tags::Kind::kCollective, sequence_, step);
  try {
    try {
      if (isRecv) {
        comm_.recv(peer, tag, data, size, request);
      } else {
        comm_.send(peer, tag, data, size, request);
      }
    } catch (const Error& e) {
      requests_.pop_back();  // never posted
      explainConfusion(e.status());
      throw;
    } catch (...) {
      requests_.pop_back();
      throw;
    }
  } catch (...) {
    releaseAll();
    throw;
  }
  pending_.push_back({&request, peer, isRecv});
  const RequestId id = pending_.size() - 1;
  if (peer == heldSignatureTo_) releaseSignature();
  return id;
}

RequestId CollectiveContext::send(int peer, uint32_t step, const void* data, size_t size) {
  return post(false, peer, step, const_cast<void*>(data), size);
}

RequestId CollectiveContext::recv(int peer, uint32_t step, void* data, size_t size) {
  return post(true, peer, step, data, size);
}

bool CollectiveContext::chunkedMessages() const {
  return members_.empty() ? chunkedMessages_ : comm_.chunkedMessagesAmong(members_);
}

bool CollectiveContext::chunkedMessagesWith(int peer) const {
  const int pair[] = {rank_, members_.empty() ? peer : members_[peer]};
  return comm_.chunkedMessagesAmong(pair);
}

void CollectiveContext::checkSignature() {
  if (signatureChecked_) return;
  if (board_ != nullptr) {
    if (scanBoard()) {
      signatureChecked_ = true;
    } else {
      checkOtherLane();
    }
    if (boardMismatch_ >= 0) awaitBoard();  // the others have yet to publish before this rank may leave
    return;
  }
  const transport::Request& received = *pending_[signatureRecvSlot_].request;
  if (!received.done.load(std::memory_order_acquire)) return;
  signatureChecked_ = true;
  if (received.status != COMM_OK) return;  // reported by the wait that awaits it
  if (!(theirSignature_ == signature_)) {
    notifyPeers(COMM_ERR_MISMATCH, signatureFrom_, theirSignature_);
    failMismatch(signatureFrom_, theirSignature_);
  }
}

bool CollectiveContext::mayReadMemoryOf(int communicatorRank) const {
  return comm_.world().transport().mayReadMemoryOf(comm_.worldRankOf(communicatorRank));
}

void CollectiveContext::readMemoryOf(int communicatorRank, void* local, const void* remote, size_t bytes) {
  const int error = comm_.world().transport().readMemoryOf(comm_.worldRankOf(communicatorRank), local,
                                                           reinterpret_cast<uint64_t>(remote), bytes);
  if (error == ESRCH) {
    fail(COMM_ERR_REMOTE, "{}: rank {} exited while this rank read its buffers", what(), communicatorRank);
  }
  if (error != 0) {
    fail(COMM_ERR_TRANSPORT, "{}: reading {} bytes of rank {}'s buffers failed: {}", what(), bytes, communicatorRank,
         std::strerror(error));
  }
}

std::string CollectiveContext::what() const {
  return fmt::format("comm_{} (#{} on {})", collectiveName(static_cast<CollectiveKind>(signature_.kind)), sequence_,
                     comm_.name());
}

void CollectiveContext::failMismatch(int other, const Signature& theirs) {
  fail(COMM_ERR_MISMATCH, "comm_{}: rank {} {} vs rank {} {}",
       collectiveName(static_cast<CollectiveKind>(signature_.kind)), rank_, describe(signature_), other,
       describe(theirs));
}

void CollectiveContext::failDisagreement(const std::string& why) {
  notifyPeers(COMM_ERR_MISMATCH, -1, Signature{});
  releaseAll();
  fail(COMM_ERR_MISMATCH, "{}: {}", what(), why);
}

void CollectiveContext::announce() {
  if (board_ != nullptr && !announced_) publishEntry(NodeBoard::kNoPayload);
}

void CollectiveContext::publishEntry(uint32_t payloadBytes) {
  announced_ = true;
  awaitReuse();
  board_->publish(lane_, sequence_, signature_, payloadBytes);
}

void CollectiveContext::publishPayload(uint32_t payloadBytes) {
  if (announced_) fail(COMM_ERR_INTERNAL, "{}: published on the board twice", what());
  publishEntry(payloadBytes);
}

void CollectiveContext::publishOnBoard(uint32_t payloadBytes) {
  publishPayload(payloadBytes);
  signatureChecked_ = true;  // nothing more to look at: the ranks that wait check
}

void CollectiveContext::exchangeOnBoard(uint32_t payloadBytes) {
  publishPayload(payloadBytes);
  awaitBoard();
}

void CollectiveContext::awaitPeersStarted() {
  // Held up, this rank waits until the others are half the board behind
  // instead of one entry: it then runs that many collectives without
  // looking, and never polls the entry a slower rank is about to publish
  // (its reads would pull the line away from that rank's store each time).
  // No deadlock: the ranks it waits for need nothing more from it to get
  // there, since it has published every collective before this one.
  // Rooted 8 B collectives gain most from this: their givers run ahead.
  const uint32_t needed = sequence_ + 1 - NodeBoard::kEntriesPerRank / 2;
  int r = 0;
  auto allStarted = [&] {
    for (; r < size_; ++r) {
      if (r != rank_ && !board_->started(r, needed)) return false;
    }
    return true;
  };
  waitOnBoard(allStarted, &r, "to finish an earlier collective", [] {});
  board_->noteAllStarted(needed);
}

void CollectiveContext::checkOtherLane() {
  const int r = boardScanned_;
  if (!board_->publishedElsewhere(lane_, r, sequence_)) return;
  signatureChecked_ = true;
  failMismatch(r, board_->signature(otherLane(lane_), r, sequence_));
}

bool CollectiveContext::scanBoard() {
  for (; boardScanned_ < size_; ++boardScanned_) {
    const int r = boardScanned_;
    if (r == rank_) continue;
    if (!board_->published(lane_, r, sequence_)) return false;
    if (boardMismatch_ < 0 && !(board_->signature(lane_, r, sequence_) == signature_)) boardMismatch_ = r;
  }
  return true;
}

template <typename Ready, typename AlsoCheck>
void CollectiveContext::waitOnBoard(Ready ready, const int* blocker, const char* forWhat, AlsoCheck alsoCheck) {
  for (int spin = 0; spin < kBoardSpins; ++spin) {
    if (ready()) return;
    cpuRelax();
  }
  const Deadline deadline = comm_.deadline();
  transport::Transport& transport = comm_.world().transport();
  auto work = [&] {
    // A rank waiting here may still owe a peer the finish reply of an
    // earlier large message (queued while the ring was full): that peer's
    // send, and so its start of this collective, waits on our progress.
    if (transport.progress()) return true;
    if (comm_.aborted()) fail(COMM_ERR_ABORTED, "{}: the communicator was aborted", what());
    return false;
  };
  auto stall = [&](comm_status_t status, const std::string& why) {
    throw Error(status, comm_.reportStall(flight_, *blocker, why));
  };
  waitUntil(ready, work, [&] {
    comm_.flight().waiting(flight_, *blocker);
    if (auto failure = comm_.world().peerFailure(comm_.worldRankOf(*blocker))) {
      if (ready()) return;  // the peer published before it went (World::peerFailure)
      stall(COMM_ERR_REMOTE, fmt::format("{}: {}", what(), *failure));
    }
    if (deadline.expired()) {
      stall(COMM_ERR_TIMEOUT, fmt::format("{}: timed out after {} ms waiting for rank {} {}", what(),
                                          comm_.timeout().count(), *blocker, forWhat));
    }
    alsoCheck();
  });
}

void CollectiveContext::awaitBoard() {
  announce();
  peersAhead_ = scanBoard();
  if (!peersAhead_) {
    waitOnBoard([this] { return scanBoard(); }, &boardScanned_, "to start it", [this] { checkOtherLane(); });
  }
  board_->noteAllStarted(sequence_);
  signatureChecked_ = true;
  if (boardMismatch_ >= 0) failMismatch(boardMismatch_, board_->signature(lane_, boardMismatch_, sequence_));
}

void CollectiveContext::waitFor(std::span<const Pending> pending) {
  announce();
  if (start_ == Clock::time_point{}) start_ = Clock::now();
  auto what = [this] { return this->what(); };
  std::function<void()> check = [this] {
    checkSignature();
    if (heldSignatureTo_ >= 0 && Clock::now() - start_ >= kSignatureHold) releaseSignature();
    watchNotices();
  };
  try {
    try {
      comm_.waitAll(pending, comm_.deadline(), what, &check, flight_);
    } catch (const AwaitTimeout& e) {
      checkSignature();
      notifyPeers(COMM_ERR_TIMEOUT, e.peer(), Signature{});
      throw;
    } catch (const Error& e) {
      explainConfusion(e.status());
      if (e.status() == COMM_ERR_TRANSPORT) heedEarlierNotice();
      notifyPeers(e.status(), -1, Signature{});
      throw;
    }
    checkSignature();
  } catch (...) {
    releaseAll();
    throw;
  }
}

void CollectiveContext::explainConfusion(comm_status_t status) {
  if (status == COMM_ERR_MISMATCH) awaitSignature();
  checkSignature();
}

void CollectiveContext::awaitSignature() {
  if (signatureChecked_ || board_ != nullptr) return;
  const transport::Request& posted = *pending_[signatureRecvSlot_].request;
  // The wait that failed withdrew it with the data: ask again (a signature
  // that came meanwhile waits for a receive).
  if (posted.done.load(std::memory_order_acquire) && posted.status != COMM_OK) receiveSignature();
  // A rank in this collective sends its signature before anything else,
  // or (across nodes) with its first message to this rank, once it has
  // waited a little, or at its end, so it is due soon; a second covers a
  // busy peer without holding back the report for long when its sender is
  // stuck elsewhere.
  const Deadline soon(std::min(comm_.deadline().remaining(), std::chrono::milliseconds(1000)));
  try {
    comm_.waitAll(std::span<const Pending>(&pending_[signatureRecvSlot_], 1), soon, [this] { return what(); });
  } catch (const Error&) {
    // Nothing to compare: the failure that brought this rank here is the one to report.
  }
}

void CollectiveContext::releaseAll() {
  // Before the exception unwinds the algorithm's scratch buffers, no receive
  // may still point into them.
  withdrawNoticeReceives();
  comm_.abandon(std::move(requests_), pending_);
  pending_.clear();
  requests_.clear();
  signatureChecked_ = true;
}

void CollectiveContext::poll() { comm_.world().transport().progress(); }

void CollectiveContext::wait(RequestId id) {
  const Pending awaited = pending_[id];
  if (awaited.request->done.load(std::memory_order_acquire) && awaited.request->status == COMM_OK) return;
  waitFor(std::span<const Pending>(&awaited, 1));
}

void CollectiveContext::waitAll() { waitFor(std::span<const Pending>(pending_).subspan(signatureSlots_)); }

void CollectiveContext::finish() {
  if (heldSignatureTo_ >= 0) releaseSignature();
  if (!pending_.empty()) waitFor(pending_);
  if (board_ != nullptr) {
    if (!signatureChecked_) awaitBoard();
    board_->prefetchNext(lane_, sequence_, size_, peersAhead_);
  }
  pending_.clear();
  if (notices_) {
    comm_.cancel(notices_->receives);
    notices_->receives.clear();
  }
  comm_.flight().finish(flight_, true);
  finished_ = true;
}

void CollectiveContext::withdrawNoticeReceives() {
  if (!notices_ || notices_->receives.empty()) return;
  pending_.insert(pending_.end(), notices_->receives.begin(), notices_->receives.end());
  notices_->receives.clear();
}

void CollectiveContext::notifyPeers(comm_status_t status, int otherRank, const Signature& other) {
  if (peersNotified_ || size_ == 1) return;
  peersNotified_ = true;
  FailureNotice& outgoing = notices().outgoing;
  const std::optional<World::Failure> failed = comm_.world().firstFailure();
  outgoing = {sequence_, status, rank_, otherRank, failed ? failed->worldRank : -1, signature_, other};
  uint64_t tag = tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kNoticeStep);
  try {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      transport::Request& request = requests_.emplace_back();
      comm_.send(peer, tag, &outgoing, sizeof(outgoing), request);
      pending_.push_back({&request, peer, false});
    }
  } catch (const Error&) {
    // The failure being reported matters more than not reaching everyone.
  }
}

CollectiveContext::Notices& CollectiveContext::notices() {
  if (!notices_) notices_ = std::make_unique<Notices>();
  return *notices_;
}

void CollectiveContext::postNoticeReceive(int peer) {
  size_t slot = peer < rank_ ? peer : peer - 1;
  transport::Request& request = requests_.emplace_back();
  FailureNotice& notice = notices_->incoming.emplace_back();
  comm_.recv(peer, tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kNoticeStep), &notice, sizeof(notice),
             request);
  notices_->receives[slot] = {&request, peer, true};
  notices_->of[slot] = &notice;
}

void CollectiveContext::listenForNotices() {
  notices().receives.resize(size_ - 1);
  notices_->of.resize(size_ - 1);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) postNoticeReceive(peer);
  }
}

void CollectiveContext::heedEarlierNotice() {
  if (size_ == 1 || peersNotified_) return;
  try {
    if (!notices_ || notices_->receives.empty()) listenForNotices();
    const Clock::time_point until = Clock::now() + kNoticeGrace;
    Backoff backoff;
    do {
      poll();
      watchNotices();
      backoff.pause();
    } while (Clock::now() < until);
  } catch (const Error&) {
    if (!peersNotified_) return;  // the transport failed again: the first failure is the one to report
    throw;
  }
}

void CollectiveContext::watchNotices() {
  if (size_ == 1 || peersNotified_) return;
  if (!notices_ || notices_->receives.empty()) {
    if (Clock::now() - start_ >= kNoticeDelay) listenForNotices();
    return;
  }
  for (size_t slot = 0; slot < notices_->receives.size(); ++slot) {
    const transport::Request& request = *notices_->receives[slot].request;
    if (!request.done.load(std::memory_order_acquire) || request.status != COMM_OK) continue;
    const FailureNotice& notice = *notices_->of[slot];
    if (notice.sequence != sequence_) {
      // Left over from a failed collective 2^14 sequence numbers ago.
      postNoticeReceive(notices_->receives[slot].peer);
      continue;
    }
    // A rank that timed out waiting for this one tells it nothing its own
    // wait will not say better (whom this rank waits for): it keeps
    // waiting, at most to its own deadline.
    if (notice.status == COMM_ERR_TIMEOUT && notice.otherRank == rank_) continue;
    peersNotified_ = true;  // every rank heard it from the rank that gave up
    const char* name = collectiveName(static_cast<CollectiveKind>(signature_.kind));
    if (notice.status == COMM_ERR_MISMATCH && notice.otherRank >= 0) {
      fail(COMM_ERR_MISMATCH, "comm_{} (#{} on {}): rank {} found rank {} {} vs rank {} {}", name, sequence_,
           comm_.name(), notice.rank, notice.rank, describe(notice.signature), notice.otherRank,
           describe(notice.other));
    }
    // A timed-out peer's wait is likely this rank's too: name it, not just the messenger.
    const std::string gaveUp = notice.status == COMM_ERR_TIMEOUT && notice.otherRank >= 0
                                   ? fmt::format("it timed out waiting for rank {}", notice.otherRank)
                                   : std::string(comm_status_string(static_cast<comm_status_t>(notice.status)));
    const std::string why = fmt::format("comm_{} (#{} on {}): rank {} gave up on it ({}) while this rank ran {}", name,
                                        sequence_, comm_.name(), notice.rank, gaveUp, describe(signature_));
    if (notice.status == COMM_ERR_MISMATCH) fail(COMM_ERR_MISMATCH, "{}", why);
    World& world = comm_.world();
    if (notice.failedRank >= 0 && notice.failedRank < world.size()) {
      world.noteFailure(notice.failedRank,
                        fmt::format("{} failed, as rank {} of {} reported", world.describePeer(notice.failedRank),
                                    notice.rank, comm_.name()));
    }
    // What this rank waited for is in its flight record already.
    throw Error(COMM_ERR_REMOTE, comm_.reportStall(flight_, -1, why));
  }
}

}  // namespace comm::core
