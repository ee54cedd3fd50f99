#include "core/revocation.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "common/log.h"
#include "core/communicator.h"
#include "core/tags.h"

namespace comm::core {
namespace {

// Notices travel as control messages (the only ones so far); the identity's
// low bits take the sequence field, so that an earlier communicator's
// notice rarely even matches.
constexpr uint32_t kRevokeStep = 1;

}  // namespace

Revocation::Revocation(Communicator& comm, uint64_t identity, int rank, int size)
    : comm_(comm),
      identity_(identity),
      rank_(rank),
      size_(size),
      incoming_(size > 1 ? size : 0),
      receives_(size > 1 ? size : 0),
      listening_(size > 1 ? size : 0, false) {
  if (size < 2) return;
  std::lock_guard lock(mutex_);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) postReceive(peer);
  }
}

Revocation::~Revocation() { close(); }

uint64_t Revocation::tag() const {
  return tags::make(comm_.id(), tags::Kind::kControl, static_cast<uint32_t>(identity_), kRevokeStep);
}

void Revocation::postReceive(int peer) {
  receives_[peer].restart();
  comm_.recv(peer, tag(), &incoming_[peer], sizeof(RevokeNotice), receives_[peer]);
  listening_[peer] = true;
}

bool Revocation::noticeArrived() {
  for (int peer = 0; peer < static_cast<int>(receives_.size()); ++peer) {
    if (!receives_[peer].done.load(std::memory_order_acquire)) continue;
    std::lock_guard lock(mutex_);
    if (!closed_ && listening_[peer] && take(peer)) return true;
  }
  return revoked_.load(std::memory_order_acquire);
}

bool Revocation::take(int peer) {
  transport::Request& request = receives_[peer];
  if (!request.done.load(std::memory_order_acquire)) return false;
  listening_[peer] = false;
  const RevokeNotice& notice = incoming_[peer];
  const comm_status_t status = request.status;
  if (status == COMM_OK && notice.identity != identity_) {
    postReceive(peer);  // an earlier communicator's, with this one's id
    return false;
  }
  if (status != COMM_OK && status != COMM_ERR_ABORTED) {
    log::debug("revocation of '{}': no more notices from rank {}: {}", comm_.name(), peer, request.error);
  }
  // Never done again: the scan in revoked() passes over it from now on.
  request.restart();
  if (revoked_.load(std::memory_order_relaxed) || status != COMM_OK) return false;
  const int origin = notice.origin >= 0 && notice.origin < size_ ? notice.origin : peer;
  World& world = comm_.world();
  if (notice.failedRank >= 0 && notice.failedRank < world.size()) {
    world.noteFailure(notice.failedRank, fmt::format("{} failed, as rank {} of '{}' knew when it revoked it",
                                                     world.describePeer(notice.failedRank), origin, comm_.name()));
  }
  adopt(origin, std::string(notice.why, strnlen(notice.why, sizeof(notice.why))), notice.failedRank);
  return true;
}

void Revocation::revoke(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (revoked_.load(std::memory_order_relaxed) || closed_) return;
  const auto failure = comm_.world().firstFailure();
  adopt(rank_, why, failure ? failure->worldRank : -1);
}

void Revocation::adopt(int origin, const std::string& why, int failedRank) {
  origin_ = origin;
  why_ = why;
  revoked_.store(true, std::memory_order_release);
  outgoing_ = RevokeNotice{.identity = identity_, .origin = origin, .failedRank = failedRank};
  std::memcpy(outgoing_.why, why.data(), std::min(why.size(), sizeof(outgoing_.why) - 1));
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || peer == origin) continue;
    // A peer known dead needs no notice, and over tcp;ofi_rxm a send to it
    // holds up the messages to the live ones behind it.
    if (comm_.world().peerFailure(comm_.worldRankOf(peer))) continue;
    transport::Request& request = sends_.emplace_back();
    try {
      comm_.send(peer, tag(), &outgoing_, sizeof(outgoing_), request);
      pendingSends_.push_back({&request, peer, false});
    } catch (const Error& error) {
      // A peer gone already needs no notice; the others still get theirs.
      log::debug("revocation of '{}': no notice to rank {}: {}", comm_.name(), peer, error.what());
    }
  }
  // Out now, not at this rank's next call: it may make none, and a notice
  // from a rank that dies next still reached the ranks it was sent to.
  comm_.progressWhileMoving(pendingSends_);
}

std::string Revocation::reason() const {
  std::lock_guard lock(mutex_);
  if (origin_ == rank_) return fmt::format("the communicator was revoked on this rank ({})", why_);
  return fmt::format("the communicator was revoked by rank {} ({})", origin_, why_);
}

void Revocation::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  std::vector<Pending> listening;
  for (size_t peer = 0; peer < listening_.size(); ++peer) {
    if (listening_[peer]) listening.push_back({&receives_[peer], static_cast<int>(peer), true});
  }
  comm_.cancel(listening);
  if (!pendingSends_.empty()) comm_.abandon(std::move(sends_), pendingSends_);
}

}  // namespace comm::core
