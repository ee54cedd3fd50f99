#include "core/collective_context.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/error.h"
#include "core/communicator.h"
#include "core/tags.h"

namespace comm::core {

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
      chunkedMessages_(comm.chunkedMessages()),
      board_(comm, comm.board(), sequence, signature_, rank_, size_),
      mismatch_(comm, comm.collectiveBuffers(), sequence, signature_),
      notices_(comm, comm.collectiveBuffers(), sequence, signature_, rank_, size_) {
  // Checked up front: a collective that needs no wait (one rank, or peers
  // that already published on the board) would otherwise never look.
  if (comm_.aborted()) fail(comm_.abortStatus(), "{}: {}", what(), comm_.abortReason());
  flight_ = comm_.flight().startCollective(sequence_, signature_);
  if (size_ == 1) return;
  if (board_.active()) {  // announced before the first message or wait
    board_.start(flight_);
  } else {
    mismatch_.start();
  }
}

CollectiveContext::~CollectiveContext() {
  if (!finished_) comm_.flight().finish(flight_, false);
  notices_.withdraw();
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
  board_.announce();
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
  mismatch_.releaseFor(peer);
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
  if (board_.active()) {
    board_.check();
  } else if (mismatch_.disagrees()) {
    notices_.notify(COMM_ERR_MISMATCH, mismatch_.from(), mismatch_.theirs());
    failMismatch(signature_, rank_, mismatch_.from(), mismatch_.theirs());
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

std::string CollectiveContext::what() const { return describeCall(signature_, sequence_, comm_.name()); }

void CollectiveContext::failDisagreement(const std::string& why) {
  notices_.notify(COMM_ERR_MISMATCH, -1, Signature{});
  releaseAll();
  fail(COMM_ERR_MISMATCH, "{}: {}", what(), why);
}

void CollectiveContext::waitFor(std::span<const Pending> pending) {
  board_.announce();
  if (start_ == Clock::time_point{}) start_ = Clock::now();
  auto what = [this] { return this->what(); };
  std::function<void()> check = [this] {
    checkSignature();
    mismatch_.releaseIfHeldSince(start_);
    notices_.watch(start_, flight_);
  };
  try {
    try {
      comm_.waitAll(pending, comm_.deadline(), what, &check, flight_);
    } catch (const AwaitTimeout& e) {
      checkSignature();
      notices_.notify(COMM_ERR_TIMEOUT, e.peer(), Signature{});
      throw;
    } catch (const Error& e) {
      explainConfusion(e.status());
      if (e.status() == COMM_ERR_TRANSPORT) notices_.heedEarlier(flight_);
      notices_.notify(e.status(), -1, Signature{});
      throw;
    }
    checkSignature();
  } catch (...) {
    releaseAll();
    throw;
  }
}

void CollectiveContext::explainConfusion(comm_status_t status) {
  if (status == COMM_ERR_MISMATCH) mismatch_.await();
  checkSignature();
}

void CollectiveContext::releaseAll() {
  // Before the exception unwinds the algorithm's scratch buffers, no receive
  // may still point into them.
  notices_.withdraw();
  comm_.abandon(std::move(requests_), pending_);
  pending_.clear();
  requests_.clear();
  board_.stop();
  mismatch_.stop();
}

void CollectiveContext::poll() { comm_.world().transport().progress(); }

void CollectiveContext::wait(RequestId id) {
  const Pending awaited = pending_[id];
  if (awaited.request->done.load(std::memory_order_acquire) && awaited.request->status == COMM_OK) return;
  waitFor(std::span<const Pending>(&awaited, 1));
}

void CollectiveContext::waitAll() { waitFor(std::span<const Pending>(pending_).subspan(mismatch_.firstDataSlot())); }

void CollectiveContext::finish() {
  mismatch_.releaseHeld();
  if (!pending_.empty()) waitFor(pending_);
  board_.finish();
  pending_.clear();
  notices_.cancel();
  comm_.flight().finish(flight_, true);
  finished_ = true;
}

}  // namespace comm::core
