// Revocation: comm_revoke on one rank makes every pending and future
// operation on the communicator fail, on every live rank, with
// COMM_ERR_REVOKED. The revoking rank sends a notice to every member; each
// member that learns of it sends it on to every member in turn, so it
// spreads even when the revoking rank dies halfway through its sends, and
// stops there (a revoked rank sends nothing more). Every member keeps a
// receive posted from each peer for the communicator's life, so a notice
// is taken in by whatever call on this rank next moves the transport, and a
// rank in no call learns of it in its next one.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "core/pending.h"

namespace comm::core {

class Communicator;

// What a revoking rank sends. Fixed size: receives must know the size.
struct RevokeNotice {
  uint64_t identity = 0;  // the communicator's (a notice for an earlier one with its id is ignored)
  int32_t origin = -1;    // the rank of the communicator that revoked it
  // The world rank of the first failure the revoking rank knew of, or -1:
  // the ranks it reaches know of it too (comm_failed_ranks).
  int32_t failedRank = -1;
  char why[112] = {};  // NUL-terminated
};

class Revocation {
 public:
  // Posts the receives of `comm` (this rank `rank` of `size`), whose
  // identity `identity` tells its notices from those of an earlier
  // communicator that had its id.
  Revocation(Communicator& comm, uint64_t identity, int rank, int size);
  Revocation(const Revocation&) = delete;
  Revocation& operator=(const Revocation&) = delete;
  ~Revocation();

  // comm_revoke on this rank: `why` says what led to it.
  void revoke(const std::string& why);
  // Whether the communicator is revoked, here or by a notice that came in.
  bool revoked() { return revoked_.load(std::memory_order_acquire) || (!receives_.empty() && noticeArrived()); }
  // "the communicator was revoked by rank 2 (...)": the error of the call it stops.
  std::string reason() const;
  // Withdraws the receives and gives up on notices not yet sent (the
  // communicator goes away).
  void close();

 private:
  bool noticeArrived();
  // Takes in the notice from `peer`; false when it was not one (a notice of
  // an earlier communicator, which is ignored, or the peer's end).
  bool take(int peer);
  void postReceive(int peer);
  // Marks the communicator revoked by `origin` and sends the notice on to
  // every member but this rank and `origin`, with `failedRank`. Under mutex_.
  void adopt(int origin, const std::string& why, int failedRank);
  uint64_t tag() const;

  Communicator& comm_;
  uint64_t identity_;
  int rank_;
  int size_;
  std::atomic<bool> revoked_{false};
  mutable std::mutex mutex_;  // guards everything below, and the transport posts
  int origin_ = -1;
  std::string why_;
  std::vector<RevokeNotice> incoming_;        // one per peer
  std::vector<transport::Request> receives_;  // one per peer; this rank's unused
  std::vector<bool> listening_;               // per peer: its receive is posted and not yet taken
  RevokeNotice outgoing_;
  std::deque<transport::Request> sends_;
  std::vector<Pending> pendingSends_;
  bool closed_ = false;
};

}  // namespace comm::core
