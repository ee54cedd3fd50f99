// A communicator: an ordered set of world ranks with its own tag space,
// timeout, abort flag, collective sequence and executor for asynchronous
// collectives.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/error.h"
#include "core/collective_buffers.h"
#include "core/executor.h"
#include "core/flight_recorder.h"
#include "core/node_board.h"
#include "core/pending.h"
#include "core/revocation.h"
#include "core/world.h"
#include "cuda/ipc_workspace.h"
#include "cuda/stream_gate.h"

namespace comm::core {

class Operation;

// What waitAll throws when time runs out (COMM_ERR_TIMEOUT): also the first
// peer it was still waiting for, which the ranks it tells learn too.
class AwaitTimeout : public Error {
 public:
  AwaitTimeout(int peer, const std::string& message) : Error(COMM_ERR_TIMEOUT, message), peer_(peer) {}
  int peer() const { return peer_; }

 private:
  int peer_;
};

// Which ranks of a communicator share a node (World's node numbering):
// nodes numbered by their lowest rank in the communicator, each node's
// ranks in rank order, so placement (block or round-robin) and numbering
// give the same groups.
struct NodeLayout {
  std::vector<int> nodeOf;  // per rank
  // Per rank: its index among its node's ranks, its local rank. The nodes
  // are those algorithms see, which COMM_TEST_RANKS_PER_NODE may cut finer
  // than the hosts that Communicator::localRank() (comm_local_rank) counts.
  std::vector<int> localRank;
  std::vector<std::vector<int>> members;  // per node
  int ranksPerNode = 0;                   // every node's count, or 0 when they differ
  std::vector<int> byNode;                // the ranks node by node: node 0's, then node 1's...
  bool blocked = true;                    // byNode is rank order (each node's ranks are consecutive)

  int count() const { return static_cast<int>(members.size()); }
  // One rank per node, in node order: `root` on its own node, the node's
  // first rank on the others (every node's first rank for -1).
  std::vector<int> leaders(int root = -1) const;
};

class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  // `identity` tells this communicator from earlier ones that had its id
  // (every member is given the same; core/revocation.h).
  Communicator(std::shared_ptr<World> world, uint16_t id, uint64_t identity, std::vector<int> worldRanks,
               std::string name);
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(worldRanks_.size()); }
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  uint16_t id() const { return id_; }
  // Tells it from earlier communicators that had its id (core/revocation.h).
  uint64_t identity() const { return identity_; }
  const std::string& name() const { return name_; }
  int worldRankOf(int rank) const { return worldRanks_[rank]; }
  int rankOfWorld(int worldRank) const;  // -1 when not a member
  const std::vector<int>& worldRanks() const { return worldRanks_; }
  const NodeLayout& nodes() const { return nodes_; }
  // Whether its ranks move large messages to each other as streams of
  // chunks (Transport::wantsChunkedMessages; algo/blocks/pipeline.h).
  bool chunkedMessages() const { return chunkedMessages_; }
  // The same for the ranks `ranks` of this communicator (a subgroup): every
  // kind of pair among them (on one host, on different hosts) wants chunks.
  // Both ends of a message must agree, and every rank of the subgroup
  // derives the same answer from the same list; a rank's own peers would
  // not do (a rank alone on its host sees only network peers).
  bool chunkedMessagesAmong(std::span<const int> ranks) const;
  World& world() { return *world_; }
  const std::shared_ptr<World>& worldPtr() const { return world_; }

  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeoutMs_.load()); }
  void setTimeout(std::chrono::milliseconds timeout) { timeoutMs_.store(timeout.count()); }
  Deadline deadline() const { return Deadline(timeout()); }

  void abort() { aborted_.store(true); }
  // comm_destroy on one thread while another is in a call on it: the call
  // fails at its next look (aborted()), naming the destroy.
  void markDestroyed() { destroyed_.store(true); }
  // comm_revoke: every pending and future operation on this communicator
  // fails, on every live member (core/revocation.h).
  void revoke(const std::string& why) { revocation_->revoke(why); }
  bool aborted() const {
    return aborted_.load(std::memory_order_relaxed) || destroyed_.load(std::memory_order_relaxed) ||
           world_->aborted() || revocation_->revoked();
  }
  // The status and the reason of the error of a call aborted() stops.
  comm_status_t abortStatus() const;
  std::string abortReason() const;

  // Post on the transport with peers given as ranks of this communicator.
  void send(int peer, uint64_t tag, const void* data, size_t size, transport::Request& request);
  void recv(int peer, uint64_t tag, void* data, size_t size, transport::Request& request);

  // Progress until every pending message is done or `deadline` passes
  // (returns false then, leaving them posted). Throws comm::Error, after
  // withdrawing every unfinished receive, when one fails, the communicator is
  // aborted or an awaited peer is gone; `what` names the operation.
  // `check`, when given, runs whenever something completed and may throw
  // (the mismatch check of a collective).
  // `flight` is the operation's entry in the flight recorder: the wait
  // notes there whom it waits for, and a timeout or a peer's failure is
  // reported (reportStall).
  bool progressUntil(std::span<const Pending> pending, Deadline deadline, const std::function<std::string()>& what,
                     const std::function<void()>* check = nullptr, uint64_t flight = FlightRecorder::kNone);
  // progressUntil, but running out of time is an AwaitTimeout naming the peers awaited.
  void waitAll(std::span<const Pending> pending, Deadline deadline, const std::function<std::string()>& what,
               const std::function<void()>* check = nullptr, uint64_t flight = FlightRecorder::kNone);
  // Withdraw every unfinished receive.
  void cancel(std::span<const Pending> pending);
  // Moves the transport while `pending` messages still complete: returns
  // once all are done, nothing completed for a short while (a peer that
  // died or withdrew its receive) or the timeout passed.
  void progressWhileMoving(std::span<const Pending> pending);
  // Give up on messages whose owner is going away: withdraw the receives and
  // let the sends finish while they still move; requests the transport may
  // still touch after that are kept alive (leaked) rather than freed under it.
  void abandon(std::deque<transport::Request>&& requests, std::span<const Pending> pending);

  // Run a collective: at once on this thread when `async` is false and
  // nothing is queued, else after every earlier asynchronous collective.
  // The sequence number it gets is fixed here, in issue order; `onIssue`
  // runs first, in that same order (it may throw: the call is then not
  // issued).
  // A call made while another thread is issuing one on this communicator
  // fails with COMM_ERR_INVALID_USAGE (failConcurrentIssue): which of the
  // two comes first would be a race, decided differently on each rank, and
  // the ranks would pair different calls (comm.h, thread safety).
  // A template so that the blocking path calls `body` without wrapping it
  // in a std::function (an allocation per call).
  template <typename Body, typename OnIssue = void (*)()>
  std::shared_ptr<Operation> runCollective(
      Body&& body, bool async, OnIssue&& onIssue = [] {}) {
    std::unique_lock lock(issueMutex_, std::try_to_lock);
    if (!lock.owns_lock()) failConcurrentIssue();
    onIssue();
    uint32_t sequence = nextSequence_++;
    if (!async && executor_.idle()) {
      body(sequence);  // throws on failure, straight to the caller
      return nullptr;
    }
    return queueCollective(std::function<void(uint32_t)>(std::forward<Body>(body)), sequence, async, lock);
  }

  // Brackets the making of a communicator from this one (split, group,
  // shrink), which may outlast the call (api/making.h). Making another
  // meanwhile fails with COMM_ERR_INVALID_USAGE: the ranks could take the
  // two in different orders.
  void beginChild(const char* call);
  void endChild() { makingChild_.store(false); }
  // The CUDA stream collectives on device memory are ordered on
  // (comm_set_stream), or null; and its device.
  void setStream(void* stream, int device);
  void* stream() const { return stream_.load(std::memory_order_acquire); }
  int streamDevice() const { return streamDevice_.load(std::memory_order_acquire); }
  // What holds the stream while a stream-ordered collective runs; made on
  // first use. Only under the issue lock (runCollective's onIssue).
  cuda::StreamGate& streamGate();
  // The device scratch ranks sharing a GPU exchange data through
  // (algo/device/ipc_all_reduce.h); made on first use. Only on the thread
  // that runs collectives.
  cuda::IpcWorkspace& ipcWorkspace();

  CollectiveBuffers& collectiveBuffers() { return collectiveBuffers_; }
  // Where small collectives and every collective's signature go when all
  // ranks share this node (core/node_board.h); null otherwise.
  NodeBoard* board() { return board_.get(); }

  FlightRecorder& flight() { return flight_; }
  // The operation of flight entry `number` failed (`why`) waiting for `peer`
  // (a rank of this communicator, -1 when unknown): marks it, and the first
  // time on this communicator writes the flight record to the log and, with
  // COMM_DEBUG_DIR, to <dir>/flight.<communicator>.rank<world rank>.json.
  // Returns the error message to raise: `why`, naming the first failed rank
  // this rank knows of (World::blame).
  std::string reportStall(uint64_t number, int peer, const std::string& why);

  // How many children with this `key` (member list, split) this rank made
  // before; equal on every member when they call in the same order, which
  // names the child's rendezvous without a message.
  int nextChildIndex(const std::string& key);
  // How many members shrinks of this communicator found failed and so
  // released its id for (core/groups.cc, shrink).
  int failedMembersReleased() const { return failedMembersReleased_.load(); }
  void setFailedMembersReleased(int count) { failedMembersReleased_.store(count); }

 private:
  // Hands `body` to the executor (behind earlier asynchronous collectives);
  // the handle when `async`, else waits for it (releasing `lock` first).
  std::shared_ptr<Operation> queueCollective(std::function<void(uint32_t sequence)> body, uint32_t sequence, bool async,
                                             std::unique_lock<std::mutex>& lock);
  void layOutNodes();
  // Withdraws the receives and throws; a timeout or a failure of `peer`
  // (of the pending messages) is reported first (reportStall).
  [[noreturn]] void failAwaited(std::span<const Pending> pending, comm_status_t status, const std::string& why,
                                const std::function<std::string()>& what, uint64_t flight, int peer);

  std::shared_ptr<World> world_;
  uint16_t id_;
  uint64_t identity_;
  std::vector<int> worldRanks_;
  std::string name_;
  int rank_ = -1;
  int localRank_ = 0;
  int localSize_ = 0;
  bool chunkedMessages_ = false;
  NodeLayout nodes_;
  std::atomic<int64_t> timeoutMs_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> destroyed_{false};
  std::unique_ptr<Revocation> revocation_;  // closed by the destructor, before the id goes back
  [[noreturn]] void failConcurrentIssue() const;

  std::mutex issueMutex_;  // orders collective issue (sequence numbers, inline vs queued)
  uint32_t nextSequence_ = 0;
  // Not under issueMutex_: a shrink must not wait behind a call stuck on a dead peer.
  std::mutex childMutex_;
  std::map<std::string, int> childCounts_;  // guarded by childMutex_
  std::atomic<int> failedMembersReleased_{0};
  std::atomic<bool> makingChild_{false};
  CollectiveBuffers collectiveBuffers_;  // used by the collective that runs
  std::unique_ptr<NodeBoard> board_;
  std::atomic<void*> stream_{nullptr};
  std::atomic<int> streamDevice_{-1};
  std::unique_ptr<cuda::StreamGate> gate_;  // guarded by issueMutex_
  std::unique_ptr<cuda::IpcWorkspace> ipcWorkspace_;
  FlightRecorder flight_;
  std::atomic<bool> stallReported_{false};
  Executor executor_;
};

}  // namespace comm::core
