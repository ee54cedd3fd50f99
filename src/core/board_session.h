// One collective's use of its communicator's node board (core/node_board.h):
// every rank publishes the collective's signature there before it sends or
// waits for anything (announce), and small collectives their whole data
// (exchange, publish); each rank compares every other rank's signature, so
// every rank of a mismatched collective fails with COMM_ERR_MISMATCH. Before
// a rank overwrites its entry it waits until the others are done with what
// the entry held (awaitReuse: the board's only flow control).
#pragma once

#include <cstdint>
#include <string>

#include "core/flight_recorder.h"
#include "core/node_board.h"
#include "core/signature.h"

namespace comm::core {

class Communicator;

class BoardSession {
 public:
  // Collective `sequence` of `comm`, this rank being `rank` of `size`, on
  // `board` (null when the communicator has none). `signature` is the
  // collective's, kept by the caller for as long as this lives. Inline, as
  // the other steps every collective takes: the small ones cost little
  // more than these.
  BoardSession(Communicator& comm, NodeBoard* board, uint32_t sequence, const Signature& signature, int rank, int size)
      : comm_(comm), board_(board), sequence_(sequence), signature_(signature), rank_(rank), size_(size) {}
  BoardSession(const BoardSession&) = delete;
  BoardSession& operator=(const BoardSession&) = delete;

  // Whether the communicator has a board (all its ranks share this node).
  bool active() const { return board_ != nullptr; }
  // Starts checking the signatures, in the lane the signature picks; only
  // on an active board of more than one rank. `flight` is the collective's
  // entry in the communicator's flight recorder, where waits note whom
  // they wait for.
  void start(uint64_t flight) {
    flight_ = flight;
    checked_ = false;
    lane_ = NodeBoard::laneOf(signature_, size_);
  }
  // Whether every rank's signature has been compared (or none will be).
  bool checked() const { return checked_; }
  // Nothing more to compare: the collective is being abandoned.
  void stop() { checked_ = true; }

  // Publishes the signature without payload, once: before this rank's
  // first message or wait.
  void announce() {
    if (board_ != nullptr && !announced_) publishEntry(NodeBoard::kNoPayload);
  }
  // This rank's payload area for this collective (NodeBoard::kPayloadBytes,
  // or kNarrowPayloadBytes for the few bytes of a rooted collective:
  // NodeBoard::laneOf); waits until the others are done with what it held
  // before.
  char* ownPayload() {
    awaitReuse();
    return board_->ownPayload(lane_, sequence_);
  }
  // Publishes the signature with the first `payloadBytes` of ownPayload()
  // (NodeBoard::kNoPayload: none), then waits until every rank has
  // published this collective, checking their signatures.
  void exchange(uint32_t payloadBytes);
  // Publishes like exchange but waits for nobody: the collective is over
  // for this rank, which only gives (a broadcast root, a gather leaf). Such
  // a rank cannot see a mismatch; the ranks that wait for it do.
  void publish(uint32_t payloadBytes);
  // What `rank` published (once exchange has returned).
  const char* payloadOf(int rank) const { return board_->payload(lane_, rank, sequence_); }
  uint32_t payloadBytesOf(int rank) const { return board_->payloadBytes(lane_, rank, sequence_); }

  // Compares the signatures of the ranks that have published since the last
  // look, without waiting for the others; fails on a mismatch once every
  // rank has published. Inline: waits call it whenever a message completes.
  void check() {
    if (!checked_) checkPublished();
  }
  // Waits until every rank has published (deadline, abort and dead peers
  // end it with an error), then fails if one disagreed.
  void await();
  // At the end of a successful collective: awaits the signatures if nothing
  // did, and readies the lines of the next collective.
  void finish() {
    if (board_ == nullptr) return;
    if (!checked_) await();
    board_->prefetchNext(lane_, sequence_, size_, peersAhead_);
  }

 private:
  void publishEntry(uint32_t payloadBytes);
  // publishEntry, which must be the collective's first publication.
  void publishPayload(uint32_t payloadBytes);
  void checkPublished();
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
  bool scan();
  // A rank whose signature picked the other lane of the board never shows
  // up in this one; fails naming the mismatch when the rank scan waits for
  // did that. Looked at only while waiting: it reads a line that rank
  // writes for every collective.
  void checkOtherLane();
  std::string what() const;

  Communicator& comm_;
  NodeBoard* board_;
  uint32_t sequence_;
  const Signature& signature_;
  int rank_;
  int size_;
  uint64_t flight_ = FlightRecorder::kNone;
  Lane lane_ = Lane::kWide;  // where this collective's entries lie
  bool checked_ = true;      // every rank's signature was compared
  bool announced_ = false;   // this rank's signature is on the board
  bool reusable_ = false;    // its entry for this collective is free to write
  int scanned_ = 0;          // ranks below this index published and were compared
  int mismatch_ = -1;        // the first of them whose signature differs
  bool peersAhead_ = false;  // every peer had published before this rank looked
};

}  // namespace comm::core
