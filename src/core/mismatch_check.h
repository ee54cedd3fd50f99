// The mismatch check over the network: on a communicator without a node
// board (core/board_session.h checks the signatures there), each rank sends
// its collective's signature (kind, dtype, count, op, root) along the edges
// of a spanning tree over the ranks (signatureEdges) and compares the one it
// receives. Any disagreement breaks at least one edge of the tree, so at
// least one rank sees it, names both sides and fails with COMM_ERR_MISMATCH,
// even when the data messages themselves would never match (a different
// root). The edges between nodes wait for the data: see release().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "core/collective_buffers.h"
#include "core/pending.h"
#include "core/signature.h"

namespace comm::core {

class Communicator;
struct NodeLayout;

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

SignatureEdges signatureEdges(const NodeLayout& nodes, int rank);

// Fails with COMM_ERR_MISMATCH naming both sides: this rank (`rank`, which
// runs `ours`) and `other`, which runs `theirs`.
[[noreturn]] void failMismatch(const Signature& ours, int rank, int other, const Signature& theirs);

// One collective's signature messages. They go through the communicator's
// message bookkeeping (CollectiveBuffers), ahead of the algorithm's
// messages: a wait for those alone skips them (firstDataSlot).
class MismatchCheck {
 public:
  // Collective `sequence` of `comm`, whose message bookkeeping is
  // `buffers`. `signature` is the collective's, kept by the caller for as
  // long as this lives.
  MismatchCheck(Communicator& comm, CollectiveBuffers& buffers, uint32_t sequence, const Signature& signature)
      : comm_(comm),
        requests_(buffers.requests),
        pending_(buffers.pending),
        sequence_(sequence),
        signature_(signature) {}
  MismatchCheck(const MismatchCheck&) = delete;
  MismatchCheck& operator=(const MismatchCheck&) = delete;

  // Sends this rank's signature along its edges (the one to the next node
  // held back: see release) and posts the receive of its parent's.
  void start();

  // Whether the signature received has been compared (or none is awaited).
  bool checked() const { return checked_; }
  // Compares the signature received once it is in; true when it differs
  // (from() sent theirs()). A failed receive counts as compared: the wait
  // that awaits it reports that failure.
  bool disagrees() { return !checked_ && compare(); }
  int from() const { return from_; }
  const Signature& theirs() const { return theirs_; }
  // Nothing more to compare: the messages were abandoned.
  void stop() { checked_ = true; }
  // Where the algorithm's messages start in the pending list.
  size_t firstDataSlot() const { return slots_; }

  // The signature held for the next node's first rank crosses the network,
  // where on its own it costs both ends a system call and a wakeup on cores
  // the ranks share: it goes with this collective's first message to or
  // from that rank (releaseFor, right behind a send of data), or once this
  // rank has waited kSignatureHold (releaseIfHeldSince: a rank that waits on the
  // other for good must still show it the mismatch), or at the end
  // (releaseHeld).
  void releaseFor(int peer) {
    if (peer == heldTo_) release();
  }
  void releaseIfHeldSince(Clock::time_point start) {
    if (heldTo_ >= 0 && Clock::now() - start >= kSignatureHold) release();
  }
  void releaseHeld() {
    if (heldTo_ >= 0) release();
  }

  // Waits a little for the signature receive, if one is outstanding, after
  // a size or tag confusion; a failure of that wait is not reported (the
  // caller has one to report).
  void await();

 private:
  // How long a rank holds its signature for the next node's first rank
  // while it waits for something else.
  static constexpr auto kSignatureHold = std::chrono::milliseconds(1);

  bool compare();
  uint64_t tag() const;
  void send(int to, transport::Request& out);
  void release();
  void receive();
  std::string what() const;

  Communicator& comm_;
  std::deque<transport::Request>& requests_;  // the communicator's
  std::vector<Pending>& pending_;             // likewise
  uint32_t sequence_;
  const Signature& signature_;
  Signature theirs_;  // of from_, the rank before this one in the tree
  int from_ = -1;
  size_t receiveSlot_ = 0;  // in pending_, while !checked_
  size_t slots_ = 0;        // pending_ starts with the signature messages' entries
  int heldTo_ = -1;         // the rank release() is to send to, until it has
  size_t heldSlot_ = 0;     // its entry in pending_, done until then
  bool checked_ = true;
};

}  // namespace comm::core
