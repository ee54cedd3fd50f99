// What an algorithm sees while it runs one collective: its rank and size,
// messages tagged with the collective's sequence number and a step id the
// algorithm picks, the node board where there is one, and waits that also
// watch the mismatch check.
//
// Mismatch detection. On a communicator with a node board
// (core/node_board.h) every rank publishes the collective's signature (kind,
// dtype, count, op, root) there before it sends or waits for anything, and
// checks every other rank's; every rank of a mismatched collective fails with
// COMM_ERR_MISMATCH. Elsewhere each rank sends its signature along the
// edges of a spanning tree over the ranks (collective_context.cc,
// signatureEdges; the edges between nodes wait for the data: see
// releaseSignature) and compares the one it receives: any disagreement
// breaks at least one edge of the tree, so at least one rank sees it,
// names both sides and fails, even when the data messages themselves would
// never match (a different root).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm.h"
#include "common/deadline.h"
#include "core/collective_buffers.h"
#include "core/flight_recorder.h"
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
  bool hasBoard() const { return board_ != nullptr && members_.empty() && !inSegment_; }
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
  char* boardPayload() {
    awaitReuse();
    return board_->ownPayload(lane_, sequence_);
  }
  // Publishes this rank's signature with the first `payloadBytes` of
  // boardPayload() (NodeBoard::kNoPayload: none), then waits until every
  // rank has published this collective, checking their signatures.
  void exchangeOnBoard(uint32_t payloadBytes);
  // Publishes like exchangeOnBoard but waits for nobody: the collective is
  // over for this rank, which only gives (a broadcast root, a gather leaf).
  // Such a rank cannot see a mismatch; the ranks that wait for it do.
  void publishOnBoard(uint32_t payloadBytes);
  // What `rank` published (once exchangeOnBoard has returned).
  const char* boardPayloadOf(int rank) const { return board_->payload(lane_, rank, sequence_); }
  uint32_t boardPayloadBytesOf(int rank) const { return board_->payloadBytes(lane_, rank, sequence_); }

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
  void checkSignature();
  // A size or tag confusion (COMM_ERR_MISMATCH from the transport) usually
  // means the ranks disagree: fails with the signatures' disagreement if
  // they show one, once the signature is in (the data may come first).
  void explainConfusion(comm_status_t status);
  // The tag of this collective's signature messages.
  uint64_t signatureTag() const;
  // Sends this rank's signature to `to`.
  void sendSignature(int to, transport::Request& out);
  // Sends the signature held for the next node's first rank. The message
  // crosses the network, where on its own it costs both ends a system call
  // and a wakeup on cores the ranks share: it goes with this collective's
  // first message to or from that rank (right behind a send of data), or
  // once this rank has waited kSignatureHold (a rank that waits on the
  // other for good must still show it the mismatch), or at finish().
  void releaseSignature();
  // Posts the receive of signatureFrom_'s signature.
  void receiveSignature();
  // Waits a little for the signature receive, if one is outstanding; a
  // failure of that wait is not reported (the caller has one to report).
  void awaitSignature();
  [[noreturn]] void failMismatch(int other, const Signature& theirs);
  // Publishes the signature on the board without payload, once.
  void announce();
  void publishEntry(uint32_t payloadBytes);
  // publishEntry, which must be the collective's first publication.
  void publishPayload(uint32_t payloadBytes);
  // Waits until this rank may overwrite its entry for this collective (see
  // node_board.h); once. Inline: it usually only confirms what is known.
  void awaitReuse() {
    if (reusable_) return;
    if (!board_->knownAllStarted(sequence_ - NodeBoard::kEntriesPerRank + 1)) awaitPeersStarted();
    reusable_ = true;
  }
  // The waiting part of awaitReuse.
  void awaitPeersStarted();
  // Waits, checking the deadline, abort and dead peers, until `ready()`;
  // `*blocker` names the rank it waits for, `forWhat` why.
  // `alsoCheck` runs with the health checks (every kHealthCheckInterval).
  template <typename Ready, typename AlsoCheck>
  void waitOnBoard(Ready ready, const int* blocker, const char* forWhat, AlsoCheck alsoCheck);
  // Confirms, in rank order, the signatures of ranks that have published;
  // true once every rank has. Notes the first that disagrees.
  bool scanBoard();
  // A rank whose signature picked the other lane of the board never shows
  // up in this one; fails naming the mismatch when the rank scanBoard waits
  // for did that. Looked at only while waiting: it reads a line that rank
  // writes for every collective.
  void checkOtherLane();
  // Waits until every rank has published on the board (deadline, abort and
  // dead peers end it with an error), then fails if one disagreed.
  void awaitBoard();
  // Tell every other rank that this rank gives up on the collective.
  void notifyPeers(comm_status_t status, int otherRank, const Signature& other);
  // Once the collective is slow, listen for peers giving up; throws when one did.
  void watchNotices();
  void listenForNotices();
  void postNoticeReceive(int peer);
  // After a transport failure: a peer that gave up first may have withdrawn
  // (or its caller freed) the buffer this rank was reading, and its notice,
  // sent before, says why. Throws that rank's reason if it comes within a
  // short grace; returns otherwise.
  void heedEarlierNotice();
  // The receives for notices join the pending messages when those are withdrawn.
  void withdrawNoticeReceives();

  // What a rank that gives up on a collective tells every other rank, so
  // that ranks still waiting for its messages fail at once instead of at
  // their deadline. Fixed size: receives must know the message size.
  struct FailureNotice {
    uint32_t sequence = 0;  // the full number; the tag holds only its low bits
    int32_t status = 0;
    int32_t rank = -1;
    int32_t otherRank = -1;   // the rank whose signature disagreed, or the one waited for at a timeout
    int32_t failedRank = -1;  // the world rank of the first failure the notifying rank knew of
    Signature signature;
    Signature other;
  };

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
  NodeBoard* board_;
  bool chunkedMessages_;
  Lane lane_ = Lane::kWide;   // where this collective's board entries lie
  bool announced_ = false;    // this rank's signature is on the board
  bool reusable_ = false;     // its entry for this collective is free to write
  int boardScanned_ = 0;      // ranks below this index published and were compared
  int boardMismatch_ = -1;    // the first of them whose signature differs
  Signature theirSignature_;  // of signatureFrom_, the rank before this one in the mismatch check
  int signatureFrom_ = -1;
  size_t signatureRecvSlot_ = 0;  // in pending_, where !signatureChecked_ without a board
  size_t signatureSlots_ = 0;     // pending_ starts with the signature messages' entries
  int heldSignatureTo_ = -1;      // the rank releaseSignature is to send to, until it has
  size_t heldSignatureSlot_ = 0;  // its entry in pending_, done until then
  bool signatureChecked_ = true;
  Clock::time_point start_{};   // of the first wait on the transport: board-only collectives never read the clock
  bool peersNotified_ = false;  // this rank's failure went out, or a peer's came in
  bool peersAhead_ = false;     // every peer had published on the board before this rank looked
  // The notices this rank sent and listens for; made only once a collective
  // is slow or fails, so a fast one never builds (or destroys) them.
  struct Notices {
    FailureNotice outgoing;
    std::list<FailureNotice> incoming;     // a list: receives point into it
    std::vector<Pending> receives;         // one per peer once listening
    std::vector<const FailureNotice*> of;  // the buffer of each of those receives
  };
  Notices& notices();
  std::unique_ptr<Notices> notices_;
};

}  // namespace comm::core
