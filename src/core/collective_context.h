// What an algorithm sees while it runs one collective: its rank and size,
// messages tagged with the collective's sequence number and a step id the
// algorithm picks, the node board where there is one, and waits that also
// watch the mismatch check.
//
// The context holds one collective's three protocols, each in its own file:
// the mismatch check over the network (core/mismatch_check.h: signatures
// along a spanning tree of the ranks), the node board where the
// communicator has one (core/board_session.h: every rank checks every
// signature there), and failure notices (core/failure_notices.h: a rank
// that gives up tells the others). A mismatch fails with COMM_ERR_MISMATCH
// naming both sides: on the board at every rank, over the network at least
// at one, which tells the others.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "comm.h"
#include "common/deadline.h"
#include "core/board_session.h"
#include "core/collective_buffers.h"
#include "core/failure_notices.h"
#include "core/flight_recorder.h"
#include "core/mismatch_check.h"
#include "core/node_board.h"
#include "core/pending.h"
#include "core/signature.h"

namespace comm::core {

class Communicator;

using RequestId = size_t;

class CollectiveContext {
 public:
  CollectiveContext(Communicator& comm, uint32_t sequence, const Signature& signature);
  // Withdraws receives still posted (a failed collective leaves nothing behind).
  ~CollectiveContext();
  CollectiveContext(const CollectiveContext&) = delete;
  CollectiveContext& operator=(const CollectiveContext&) = delete;

  // This rank and the group size the algorithm works in: the
  // communicator's, or a Subgroup's while one is open.
  int rank() const { return viewRank_; }
  int size() const { return viewSize_; }
  // The communicator's rank at `rank` of the current group, for messages.
  int communicatorRank(int rank) const { return members_.empty() ? rank : members_[rank]; }
  Communicator& communicator() { return comm_; }

  // While it lives, the algorithms called see only `members` (ranks of the
  // communicator, this rank among them, in the subgroup's rank order):
  // rank(), size(), send() and recv() speak of places in `members`, and
  // their steps start at `firstStep`, so that phases over different
  // subgroups of one collective never match each other's messages.
  // Hierarchical algorithms run the flat ones this way, within a node and
  // across nodes, without a communicator (and its rendezvous) per subgroup.
  // The node board is hidden inside: it spans the whole communicator.
  class Subgroup {
   public:
    Subgroup(CollectiveContext& ctx, std::span<const int> members, uint32_t firstStep);
    // It keeps a view of `members`: a temporary would die under it.
    Subgroup(CollectiveContext& ctx, std::vector<int>&& members, uint32_t firstStep) = delete;
    ~Subgroup();
    Subgroup(const Subgroup&) = delete;
    Subgroup& operator=(const Subgroup&) = delete;

   private:
    CollectiveContext& ctx_;
  };

  // While it lives, every message of the algorithms called is tagged as part
  // `index` of the collective: a large call run as a sequence of smaller
  // ones (algo/device/staged_segments.h) keeps each part's messages apart from the
  // others', since a rank may run part k+1 while a peer still finishes part
  // k. Subgroups may open inside it; their steps count from the part's.
  class Segment {
   public:
    // Part steps span kSegmentSteps, more than the phases of any
    // hierarchical algorithm use, so a call has at most kMaxSegments parts.
    static constexpr uint32_t kSegmentSteps = uint32_t{1} << 26;
    static constexpr size_t kMaxSegments = size_t{1} << (32 - 26);

    Segment(CollectiveContext& ctx, size_t index);
    ~Segment();
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;

   private:
    CollectiveContext& ctx_;
  };

  const Signature& signature() const { return signature_; }

  // The communicator's staging area of kStagingBytes, for receives that are
  // consumed chunk by chunk; small enough to stay in cache.
  static constexpr size_t kStagingBytes = size_t{1} << 20;
  char* staging();
  // Scratch of at least `bytes` in one of the communicator's areas, which
  // it keeps between collectives: a buffer allocated per call is, once
  // large, a fresh mmap whose page faults can cost many times the
  // collective itself (docs/dev/algorithms-measurements.md). The pointer
  // holds until the next request for the same area.
  char* scratch(Scratch area, size_t bytes);

  // Post a message of this collective to/from `peer` (a rank of the
  // communicator, never this rank). `step` tells the messages of one
  // collective apart; messages with the same peer and step match in order.
  RequestId send(int peer, uint32_t step, const void* data, size_t size);
  RequestId recv(int peer, uint32_t step, void* data, size_t size);

  // The node board, where this communicator has one (all its ranks share
  // this node): small collectives exchange their whole data there.
  // Not within a Segment: the board holds one entry per collective.
  bool hasBoard() const { return board_.active() && members_.empty() && !inSegment_; }
  // The ranks it talks to (an open Subgroup's, else the communicator's) move
  // large messages as chunks (Communicator::chunkedMessagesAmong).
  bool chunkedMessages() const;
  // The same for the messages between this rank and `peer` alone: for an
  // algorithm whose messages go straight to their rank, never forwarded.
  bool chunkedMessagesWith(int peer) const;
  // This rank's payload area on the board for this collective
  // (NodeBoard::kPayloadBytes, or kNarrowPayloadBytes for the few bytes of a
  // rooted collective: NodeBoard::laneOf); waits until the others are done
  // with what it held before.
  char* boardPayload() { return board_.ownPayload(); }
  // Publishes this rank's signature with the first `payloadBytes` of
  // boardPayload() (NodeBoard::kNoPayload: none), then waits until every
  // rank has published this collective, checking their signatures.
  void exchangeOnBoard(uint32_t payloadBytes) { board_.exchange(payloadBytes); }
  // Publishes like exchangeOnBoard but waits for nobody: the collective is
  // over for this rank, which only gives (a broadcast root, a gather leaf).
  // Such a rank cannot see a mismatch; the ranks that wait for it do.
  void publishOnBoard(uint32_t payloadBytes) { board_.publish(payloadBytes); }
  // What `rank` published (once exchangeOnBoard has returned).
  const char* boardPayloadOf(int rank) const { return board_.payloadOf(rank); }
  uint32_t boardPayloadBytesOf(int rank) const { return board_.payloadBytesOf(rank); }

  // Cross-Memory Attach to another rank of this node, named by its rank in
  // the communicator (not its place in a Subgroup): an algorithm may then
  // read that rank's buffers in place, once the rank has sent it their
  // addresses and while it keeps them, instead of having them sent. Only
  // reads: a rank that gave up on a collective may have handed its buffers
  // back to its caller, and a write would land in whatever uses them now.
  bool mayReadMemoryOf(int communicatorRank) const;
  // Copies `bytes` at `remote` in that rank's memory into `local`; throws
  // COMM_ERR_REMOTE naming the rank when it has exited.
  void readMemoryOf(int communicatorRank, void* local, const void* remote, size_t bytes);

  // Let the transport move messages without waiting for any (between the
  // pieces of a long local computation).
  void poll();

  // Waits for the algorithm's messages: `id`, or every one posted so far.
  // Neither waits for the signature messages, which finish() awaits: a
  // rank whose parent in the mismatch check is across the network would
  // otherwise wait for that message before its first step within its node
  // was done. Each wait's check still compares the signature once the
  // transport has read it, so a mismatch that leaves the data waiting
  // forever is still seen (and the board is looked at the same way).
  void wait(RequestId id);
  void waitAll();
  // Wait for every message and the mismatch check; call once at the end.
  void finish();
  // Fails the collective for a disagreement the signature cannot show (sizes
  // agreed only pairwise) and tells every other rank, so that a rank still
  // waiting for this one fails at once instead of at its deadline.
  [[noreturn]] void failDisagreement(const std::string& why);
  // "comm_all_reduce (#12 on world)": the call the user made, for messages.
  std::string what() const;

 private:
  RequestId post(bool isRecv, int peer, uint32_t step, void* data, size_t size);
  // Waits for `pending` (which never holds the signature receive twice) and
  // the signature receive; the span may be pending_ itself.
  void waitFor(std::span<const Pending> pending);
  // Withdraw every receive and settle every send now (a failure is unwinding).
  void releaseAll();
  // Compares the signatures in so far (the board's or the one received);
  // fails, telling the peers, on a disagreement.
  void checkSignature();
  // A size or tag confusion (COMM_ERR_MISMATCH from the transport) usually
  // means the ranks disagree: fails with the signatures' disagreement if
  // they show one, once the signature is in (the data may come first).
  void explainConfusion(comm_status_t status);

  Communicator& comm_;
  uint32_t sequence_;
  uint64_t flight_ = FlightRecorder::kNone;  // its entry in the communicator's flight recorder
  bool finished_ = false;                    // finish() returned: it succeeded
  Signature signature_;
  int rank_;
  int size_;
  int viewRank_;
  int viewSize_;
  std::span<const int> members_;   // an open Subgroup's, else empty
  uint32_t firstStep_ = 0;         // likewise
  uint32_t segmentFirstStep_ = 0;  // an open Segment's first step
  bool inSegment_ = false;
  std::deque<transport::Request>& requests_;  // the communicator's, emptied at the end
  std::vector<Pending>& pending_;             // likewise; indexed by RequestId
  bool chunkedMessages_;
  Clock::time_point start_{};  // of the first wait on the transport: board-only collectives never read the clock
  // After signature_: they keep a reference to it.
  BoardSession board_;
  MismatchCheck mismatch_;
  FailureNotices notices_;
};

}  // namespace comm::core
