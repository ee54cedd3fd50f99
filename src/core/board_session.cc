#include "core/board_session.h"

#include "common/backoff.h"
#include "common/error.h"
#include "core/communicator.h"
#include "core/mismatch_check.h"

namespace comm::core {
namespace {

// Looks at the board before the first clock read: a peer running on a core
// of its own publishes within a few hundred nanoseconds.
constexpr int kBoardSpins = 32;

}  // namespace

std::string BoardSession::what() const { return describeCall(signature_, sequence_, comm_.name()); }

void BoardSession::publishEntry(uint32_t payloadBytes) {
  announced_ = true;
  awaitReuse();
  board_->publish(lane_, sequence_, signature_, payloadBytes);
}

void BoardSession::publishPayload(uint32_t payloadBytes) {
  if (announced_) fail(COMM_ERR_INTERNAL, "{}: published on the board twice", what());
  publishEntry(payloadBytes);
}

void BoardSession::publish(uint32_t payloadBytes) {
  publishPayload(payloadBytes);
  checked_ = true;  // nothing more to look at: the ranks that wait check
}

void BoardSession::exchange(uint32_t payloadBytes) {
  publishPayload(payloadBytes);
  await();
}

void BoardSession::checkPublished() {
  if (scan()) {
    checked_ = true;
  } else {
    checkOtherLane();
  }
  if (mismatch_ >= 0) await();  // the others have yet to publish before this rank may leave
}

void BoardSession::awaitPeersStarted() {
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

void BoardSession::checkOtherLane() {
  const int r = scanned_;
  if (!board_->publishedElsewhere(lane_, r, sequence_)) return;
  checked_ = true;
  failMismatch(signature_, rank_, r, board_->signature(otherLane(lane_), r, sequence_));
}

bool BoardSession::scan() {
  for (; scanned_ < size_; ++scanned_) {
    const int r = scanned_;
    if (r == rank_) continue;
    if (!board_->published(lane_, r, sequence_)) return false;
    if (mismatch_ < 0 && !(board_->signature(lane_, r, sequence_) == signature_)) mismatch_ = r;
  }
  return true;
}

template <typename Ready, typename AlsoCheck>
void BoardSession::waitOnBoard(Ready ready, const int* blocker, const char* forWhat, AlsoCheck alsoCheck) {
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
    if (comm_.aborted()) fail(comm_.abortStatus(), "{}: {}", what(), comm_.abortReason());
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

void BoardSession::await() {
  announce();
  peersAhead_ = scan();
  if (!peersAhead_) {
    waitOnBoard([this] { return scan(); }, &scanned_, "to start it", [this] { checkOtherLane(); });
  }
  board_->noteAllStarted(sequence_);
  checked_ = true;
  if (mismatch_ >= 0) failMismatch(signature_, rank_, mismatch_, board_->signature(lane_, mismatch_, sequence_));
}

}  // namespace comm::core
