#include "core/failure_notices.h"

#include <chrono>

#include "common/backoff.h"
#include "common/error.h"
#include "core/communicator.h"
#include "core/tags.h"

namespace comm::core {
namespace {

// A collective slower than this starts listening for failure notices:
// long enough that the small collectives never post the receives, short
// enough that a rank waiting behind a failed one learns of it promptly.
constexpr auto kNoticeDelay = std::chrono::milliseconds(20);
// How long a rank whose transport failed listens for a notice its peer sent
// before that failure: it is in the queue already, behind at most the
// messages of this collective.
constexpr auto kNoticeGrace = std::chrono::milliseconds(50);
// Notices share the signature messages' kind of tag (core/mismatch_check.cc
// uses step 0).
constexpr uint32_t kNoticeStep = 1;

}  // namespace

std::string describeNotice(const FailureNotice& notice, std::string_view call, const Signature& ours) {
  if (notice.status == COMM_ERR_MISMATCH && notice.otherRank >= 0) {
    return fmt::format("{}: rank {} found rank {} {} vs rank {} {}", call, notice.rank, notice.rank,
                       describe(notice.signature), notice.otherRank, describe(notice.other));
  }
  // A timed-out peer's wait is likely this rank's too: name it, not just the messenger.
  const std::string gaveUp = notice.status == COMM_ERR_TIMEOUT && notice.otherRank >= 0
                                 ? fmt::format("it timed out waiting for rank {}", notice.otherRank)
                                 : std::string(comm_status_string(static_cast<comm_status_t>(notice.status)));
  return fmt::format("{}: rank {} gave up on it ({}) while this rank ran {}", call, notice.rank, gaveUp,
                     describe(ours));
}

bool leavesWaiting(const FailureNotice& notice, int rank) {
  return notice.status == COMM_ERR_TIMEOUT && notice.otherRank == rank;
}

uint64_t FailureNotices::tag() const { return tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kNoticeStep); }

FailureNotices::Notices& FailureNotices::notices() {
  if (!notices_) notices_ = std::make_unique<Notices>();
  return *notices_;
}

void FailureNotices::notify(comm_status_t status, int otherRank, const Signature& other) {
  if (settled_ || size_ == 1) return;
  settled_ = true;
  FailureNotice& outgoing = notices().outgoing;
  const std::optional<World::Failure> failed = comm_.world().firstFailure();
  outgoing = {sequence_, status, rank_, otherRank, failed ? failed->worldRank : -1, signature_, other};
  try {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      // A peer known dead needs no notice, and over tcp;ofi_rxm a send to
      // it holds up the messages to the live ones behind it.
      if (comm_.world().knownFailures().count(comm_.worldRankOf(peer))) continue;
      transport::Request& request = requests_.emplace_back();
      comm_.send(peer, tag(), &outgoing, sizeof(outgoing), request);
      pending_.push_back({&request, peer, false});
    }
  } catch (const Error&) {
    // The failure being reported matters more than not reaching everyone.
  }
}

void FailureNotices::postReceive(int peer) {
  size_t slot = peer < rank_ ? peer : peer - 1;
  transport::Request& request = requests_.emplace_back();
  FailureNotice& notice = notices_->incoming.emplace_back();
  comm_.recv(peer, tag(), &notice, sizeof(notice), request);
  notices_->receives[slot] = {&request, peer, true};
  notices_->of[slot] = &notice;
}

void FailureNotices::listen() {
  notices().receives.resize(size_ - 1);
  notices_->of.resize(size_ - 1);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) postReceive(peer);
  }
}

void FailureNotices::withdrawReceives() {
  pending_.insert(pending_.end(), notices_->receives.begin(), notices_->receives.end());
  notices_->receives.clear();
}

void FailureNotices::cancelReceives() {
  comm_.cancel(notices_->receives);
  notices_->receives.clear();
}

void FailureNotices::heedEarlier(uint64_t flight) {
  if (size_ == 1 || settled_) return;
  try {
    if (!listening()) listen();
    const Clock::time_point until = Clock::now() + kNoticeGrace;
    Backoff backoff;
    do {
      comm_.world().transport().progress();
      if (!settled_) read(flight);
      backoff.pause();
    } while (Clock::now() < until);
  } catch (const Error&) {
    if (!settled_) return;  // the transport failed again: the first failure is the one to report
    throw;
  }
}

void FailureNotices::watchSince(Clock::time_point start, uint64_t flight) {
  if (!listening()) {
    if (Clock::now() - start >= kNoticeDelay) listen();
    return;
  }
  read(flight);
}

void FailureNotices::read(uint64_t flight) {
  for (size_t slot = 0; slot < notices_->receives.size(); ++slot) {
    const transport::Request& request = *notices_->receives[slot].request;
    if (!request.done.load(std::memory_order_acquire) || request.status != COMM_OK) continue;
    const FailureNotice& notice = *notices_->of[slot];
    if (notice.sequence != sequence_) {
      // Left over from a failed collective 2^14 sequence numbers ago.
      postReceive(notices_->receives[slot].peer);
      continue;
    }
    if (leavesWaiting(notice, rank_)) continue;
    settled_ = true;  // every rank heard it from the rank that gave up
    // A peer stopped by a revoke passed the revoke on before it gave up,
    // on the same link: it is here already, and it is the cause.
    if (comm_.aborted())
      fail(comm_.abortStatus(), "{}: {}", describeCall(signature_, sequence_, comm_.name()), comm_.abortReason());
    const std::string why = describeNotice(notice, describeCall(signature_, sequence_, comm_.name()), signature_);
    if (notice.status == COMM_ERR_MISMATCH) fail(COMM_ERR_MISMATCH, "{}", why);
    World& world = comm_.world();
    if (notice.failedRank >= 0 && notice.failedRank < world.size()) {
      world.noteFailure(notice.failedRank,
                        fmt::format("{} failed, as rank {} of {} reported", world.describePeer(notice.failedRank),
                                    notice.rank, comm_.name()));
    }
    // What this rank waited for is in its flight record already.
    throw Error(COMM_ERR_REMOTE, comm_.reportStall(flight, -1, why));
  }
}

}  // namespace comm::core
