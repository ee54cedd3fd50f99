// Failure notices: a rank that gives up on a collective (a mismatch, a
// timeout, a transport failure) tells every other rank, so that ranks still
// waiting for its messages fail at once instead of at their deadline. A
// collective listens for them only once it is slow (or fails), so a fast
// one never posts (or withdraws) their receives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm.h"
#include "common/deadline.h"
#include "core/collective_buffers.h"
#include "core/pending.h"
#include "core/signature.h"

namespace comm::core {

class Communicator;

// What a rank that gives up on a collective tells every other rank. Fixed
// size: receives must know the message size.
struct FailureNotice {
  uint32_t sequence = 0;  // the full number; the tag holds only its low bits
  int32_t status = 0;
  int32_t rank = -1;
  int32_t otherRank = -1;   // the rank whose signature disagreed, or the one waited for at a timeout
  int32_t failedRank = -1;  // the world rank of the first failure the notifying rank knew of
  Signature signature;
  Signature other;
};

// What a rank reports on receiving `notice` while it runs `call`
// (describeCall) as `ours`: the disagreement the notifying rank found, or
// that it gave up, and why.
std::string describeNotice(const FailureNotice& notice, std::string_view call, const Signature& ours);

// Whether `notice` leaves rank `rank` waiting: a rank that timed out waiting
// for this one tells it nothing its own wait will not say better (whom this
// rank waits for), so it keeps waiting, at most to its own deadline.
bool leavesWaiting(const FailureNotice& notice, int rank);

class FailureNotices {
 public:
  // Collective `sequence` of `comm`, this rank being `rank` of `size`,
  // whose message bookkeeping is `buffers`. `signature` is the
  // collective's, kept by the caller for as long as this lives.
  FailureNotices(Communicator& comm, CollectiveBuffers& buffers, uint32_t sequence, const Signature& signature,
                 int rank, int size)
      : comm_(comm),
        requests_(buffers.requests),
        pending_(buffers.pending),
        sequence_(sequence),
        signature_(signature),
        rank_(rank),
        size_(size) {}
  FailureNotices(const FailureNotices&) = delete;
  FailureNotices& operator=(const FailureNotices&) = delete;

  // Tells every other rank that this rank gives up on the collective with
  // `status`; `otherRank` (-1: none) is the rank whose signature `other`
  // disagreed, or the one waited for at a timeout. Once per collective.
  void notify(comm_status_t status, int otherRank, const Signature& other);
  // Once the collective has waited kNoticeDelay since `start`, listens for
  // peers giving up; throws when one did. `flight` is the collective's
  // entry in the flight recorder.
  void watch(Clock::time_point start, uint64_t flight) {
    if (size_ > 1 && !settled_) watchSince(start, flight);
  }
  // After a transport failure: a peer that gave up first may have withdrawn
  // (or its caller freed) the buffer this rank was reading, and its notice,
  // sent before, says why. Throws that rank's reason if it comes within a
  // short grace; returns otherwise.
  void heedEarlier(uint64_t flight);
  // The receives for notices join the pending messages, to be withdrawn with them.
  void withdraw() {
    if (notices_ && !notices_->receives.empty()) withdrawReceives();
  }
  // Withdraws the receives for notices of a collective that succeeded.
  void cancel() {
    if (notices_) cancelReceives();
  }

 private:
  // The notices this rank sent and listens for; made only once a collective
  // is slow or fails.
  struct Notices {
    FailureNotice outgoing;
    std::list<FailureNotice> incoming;     // a list: receives point into it
    std::vector<Pending> receives;         // one per peer once listening
    std::vector<const FailureNotice*> of;  // the buffer of each of those receives
  };
  Notices& notices();
  bool listening() const { return notices_ && !notices_->receives.empty(); }
  void watchSince(Clock::time_point start, uint64_t flight);
  void listen();
  void postReceive(int peer);
  // Throws for the first notice in (of this collective, that does not leave this rank waiting).
  void read(uint64_t flight);
  void withdrawReceives();
  void cancelReceives();
  uint64_t tag() const;

  Communicator& comm_;
  std::deque<transport::Request>& requests_;  // the communicator's
  std::vector<Pending>& pending_;             // likewise
  uint32_t sequence_;
  const Signature& signature_;
  int rank_;
  int size_;
  bool settled_ = false;  // this rank's failure went out, or a peer's came in
  std::unique_ptr<Notices> notices_;
};

}  // namespace comm::core
