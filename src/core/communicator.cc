#include "core/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>

#include "common/backoff.h"
#include "common/error.h"
#include "common/log.h"
#include "core/operation.h"

namespace comm::core {

namespace {
// How long abandon() waits for a completion before it leaves the rest.
constexpr auto kAbandonQuiet = std::chrono::milliseconds(20);

bool allDone(std::span<const Pending> pending) {
  return std::all_of(pending.begin(), pending.end(),
                     [](const Pending& p) { return p.request->done.load(std::memory_order_acquire); });
}
}  // namespace

Communicator::Communicator(std::shared_ptr<World> world, uint16_t id, uint64_t identity, std::vector<int> worldRanks,
                           std::string name)
    : world_(std::move(world)),
      id_(id),
      identity_(identity),
      worldRanks_(std::move(worldRanks)),
      name_(std::move(name)),
      timeoutMs_(world_->timeout().count()) {
  for (int r = 0; r < size(); ++r) {
    int w = worldRanks_[r];
    if (w == world_->rank()) rank_ = r;
    if (world_->peer(w).sameNode) {
      if (rank_ < 0) ++localRank_;
      ++localSize_;
    }
  }
  std::vector<int> all(size());
  std::iota(all.begin(), all.end(), 0);
  chunkedMessages_ = chunkedMessagesAmong(all);
  layOutNodes();
  board_ = NodeBoard::join(*world_, id_, worldRanks_, rank_);
  revocation_ = std::make_unique<Revocation>(*this, identity, rank_, size());
}

bool Communicator::chunkedMessagesAmong(std::span<const int> ranks) const {
  if (ranks.size() < 2) return false;
  thread_local std::vector<int> hosts;
  hosts.clear();
  for (int r : ranks) hosts.push_back(world_->peer(worldRanks_[r]).hostIndex);
  std::sort(hosts.begin(), hosts.end());
  const bool sharedHost = std::adjacent_find(hosts.begin(), hosts.end()) != hosts.end();
  const bool apart = hosts.front() != hosts.back();
  const transport::Transport& transport = world_->transport();
  return (!sharedHost || transport.wantsChunkedMessages(true)) && (!apart || transport.wantsChunkedMessages(false));
}

void Communicator::layOutNodes() {
  std::vector<int> indexOfWorldNode(world_->nodeCount(), -1);
  for (int r = 0; r < size(); ++r) {
    int& node = indexOfWorldNode[world_->peer(worldRanks_[r]).nodeIndex];
    if (node < 0) {
      node = nodes_.count();
      nodes_.members.emplace_back();
    }
    nodes_.nodeOf.push_back(node);
    nodes_.localRank.push_back(static_cast<int>(nodes_.members[node].size()));
    nodes_.members[node].push_back(r);
  }
  for (const std::vector<int>& node : nodes_.members)
    nodes_.byNode.insert(nodes_.byNode.end(), node.begin(), node.end());
  for (int r = 0; r < size(); ++r) nodes_.blocked = nodes_.blocked && nodes_.byNode[r] == r;
  nodes_.ranksPerNode = static_cast<int>(nodes_.members[0].size());
  for (const std::vector<int>& node : nodes_.members) {
    if (static_cast<int>(node.size()) != nodes_.ranksPerNode) nodes_.ranksPerNode = 0;
  }
  if (log::enabled(log::Level::kDebug)) {
    std::string perNode;
    for (const std::vector<int>& node : nodes_.members)
      perNode += fmt::format("{}{}", perNode.empty() ? "" : ",", node.size());
    log::debug("communicator '{}' ({} ranks) spans {} nodes, ranks per node {}; this rank is on node {}", name_, size(),
               nodes_.count(), perNode, nodes_.nodeOf[rank_]);
    auto known = [](int index) { return index < 0 ? std::string("?") : std::to_string(index); };
    for (int n = 0; n < nodes_.count(); ++n) {
      std::string ranks;
      for (int r : nodes_.members[n]) {
        const PeerRecord& peer = world_->peer(worldRanks_[r]);
        ranks += fmt::format("{}{} (NUMA {}, socket {})", ranks.empty() ? "" : ", ", r, known(peer.placement.numa),
                             known(peer.placement.socket));
      }
      log::debug("  node {} on {}: ranks {}", n, world_->peer(worldRanks_[nodes_.members[n][0]]).host, ranks);
    }
  }
}

Communicator::~Communicator() {
  executor_.drain();
  revocation_->close();
  if (id_ != 0) world_->releaseCommunicatorId(id_, size());
}

comm_status_t Communicator::abortStatus() const {
  const bool stoppedHere = destroyed_.load(std::memory_order_relaxed) || aborted_.load(std::memory_order_relaxed);
  return !stoppedHere && revocation_->revoked() ? COMM_ERR_REVOKED : COMM_ERR_ABORTED;
}

std::string Communicator::abortReason() const {
  if (destroyed_.load(std::memory_order_relaxed)) {
    return "the communicator was destroyed (comm_destroy on another thread) while this call ran";
  }
  if (abortStatus() == COMM_ERR_REVOKED) return revocation_->reason();
  return "the communicator was aborted";
}

std::vector<int> NodeLayout::leaders(int root) const {
  std::vector<int> chosen;
  for (int n = 0; n < count(); ++n) chosen.push_back(root >= 0 && nodeOf[root] == n ? root : members[n][0]);
  return chosen;
}

int Communicator::rankOfWorld(int worldRank) const {
  auto it = std::find(worldRanks_.begin(), worldRanks_.end(), worldRank);
  return it == worldRanks_.end() ? -1 : static_cast<int>(it - worldRanks_.begin());
}

void Communicator::send(int peer, uint64_t tag, const void* data, size_t size, transport::Request& request) {
  world_->transport().send(worldRanks_[peer], tag, data, size, request);
}

void Communicator::recv(int peer, uint64_t tag, void* data, size_t size, transport::Request& request) {
  world_->transport().recv(worldRanks_[peer], tag, data, size, request);
}

void Communicator::cancel(std::span<const Pending> pending) {
  for (const Pending& p : pending) {
    if (p.isRecv && !p.request->done.load(std::memory_order_acquire)) world_->transport().cancel(*p.request);
  }
}

void Communicator::progressWhileMoving(std::span<const Pending> pending) {
  // Sends still moving (a tcp stream mid-message, a copy under way) get to
  // finish while requests keep completing. The rest wait on a peer that died,
  // hangs or withdrew its receive and will never finish: they are left once
  // nothing has completed for kAbandonQuiet, so that a failure is reported
  // at once and no wait outlasts the communicator's timeout.
  transport::Transport& transport = world_->transport();
  const Deadline cap(timeout());
  auto quietUntil = Clock::now() + kAbandonQuiet;
  Backoff backoff;
  while (!allDone(pending) && Clock::now() < quietUntil && !cap.expired()) {
    if (transport.progress()) {
      quietUntil = Clock::now() + kAbandonQuiet;
      backoff.reset();
    } else {
      transport::pauseOn(backoff, transport);
    }
  }
}

void Communicator::abandon(std::deque<transport::Request>&& requests, std::span<const Pending> pending) {
  cancel(pending);
  progressWhileMoving(pending);
  transport::Transport& transport = world_->transport();
  // The caller's buffers go back to it on return: sends that did not finish
  // are withdrawn too, so that no transport reads them afterwards.
  for (const Pending& p : pending) {
    if (!p.isRecv && !p.request->done.load(std::memory_order_acquire)) transport.cancel(*p.request);
  }
  if (!allDone(pending)) {
    static std::mutex graveyardMutex;
    static auto* graveyard = new std::vector<std::deque<transport::Request>>();
    std::lock_guard lock(graveyardMutex);
    graveyard->push_back(std::move(requests));
    log::warn("{} messages on '{}' did not finish after a failure; their bookkeeping is kept alive", pending.size(),
              name_);
  }
}

void Communicator::failAwaited(std::span<const Pending> pending, comm_status_t status, const std::string& why,
                               const std::function<std::string()>& what, uint64_t flight, int peer) {
  cancel(pending);
  std::string message = fmt::format("{}: {}", what(), why);
  if (status == COMM_ERR_TIMEOUT || status == COMM_ERR_REMOTE || status == COMM_ERR_TRANSPORT) {
    message = reportStall(flight, peer, message);
  }
  if (status == COMM_ERR_TIMEOUT && peer >= 0) throw AwaitTimeout(peer, std::move(message));
  throw Error(status, std::move(message));
}

std::string Communicator::reportStall(uint64_t number, int peer, const std::string& why) {
  const std::string message = world_->blame(why);
  try {
    if (number != FlightRecorder::kNone) {
      if (peer >= 0) flight_.waiting(number, peer);
      flight_.finish(number, false);
    }
    if (stallReported_.exchange(true)) return message;
    const std::vector<FlightRecorder::Snapshot> entries = flight_.snapshot();
    log::warn("flight record of '{}' (rank {} of {}), after: {}", name_, rank_, size(), message);
    for (const FlightRecorder::Snapshot& entry : entries) log::warn("  {}", describeFlightEntry(entry));
    const std::string dir = world_->settings().get("debug_dir");
    if (dir.empty()) return message;
    const PeerRecord& self = world_->peer(world_->rank());
    const FlightReportHeader header{name_,       id_,       rank_,    size(), world_->rank(),
                                    worldRanks_, self.host, getpid(), message};
    std::string file = name_;
    for (char& c : file) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    }
    const std::string path = fmt::format("{}/flight.{}.rank{}.json", dir, file, world_->rank());
    std::ofstream out(path);
    out << flightJson(header, entries);
    if (!out.flush()) log::warn("could not write the flight record to {}", path);
  } catch (const std::exception& error) {
    log::warn("could not report the flight record of '{}': {}", name_, error.what());
  }
  return message;
}

bool Communicator::progressUntil(std::span<const Pending> pending, Deadline deadline,
                                 const std::function<std::string()>& what, const std::function<void()>* check,
                                 uint64_t flight) {
  transport::Transport& transport = world_->transport();
  if (aborted()) failAwaited(pending, abortStatus(), abortReason(), what, flight, -1);
  Backoff backoff;
  auto nextCheck = Clock::now() + kHealthCheckInterval;
  size_t firstOpen = 0;
  for (;;) {
    while (firstOpen < pending.size() && pending[firstOpen].request->done.load(std::memory_order_acquire)) {
      const transport::Request& r = *pending[firstOpen].request;
      if (r.status != COMM_OK) {
        // A peer that revoked the communicator and then left: the revoke,
        // which came first on the same link, is the cause.
        if (aborted()) failAwaited(pending, abortStatus(), abortReason(), what, flight, -1);
        if (r.status == COMM_ERR_REMOTE) {
          const int worldRank = worldRanks_[pending[firstOpen].peer];
          world_->noteFailure(worldRank, fmt::format("{} failed: {}", world_->describePeer(worldRank), r.error));
        }
        failAwaited(pending, r.status,
                    fmt::format("{} rank {}: {}", pending[firstOpen].isRecv ? "receiving from" : "sending to",
                                pending[firstOpen].peer, r.error),
                    what, flight, pending[firstOpen].peer);
      }
      ++firstOpen;
    }
    if (firstOpen == pending.size()) return true;
    if (transport.progress()) {
      if (check) (*check)();
      backoff.reset();
      continue;
    }
    if (aborted()) failAwaited(pending, abortStatus(), abortReason(), what, flight, -1);
    auto now = Clock::now();
    if (now >= nextCheck) {
      nextCheck = now + kHealthCheckInterval;
      if (check) (*check)();
      if (flight != FlightRecorder::kNone) flight_.waiting(flight, pending[firstOpen].peer);
      for (size_t i = firstOpen; i < pending.size(); ++i) {
        if (pending[i].request->done.load(std::memory_order_acquire)) continue;
        if (auto failure = world_->peerFailure(worldRanks_[pending[i].peer])) {
          if (pending[i].request->done.load(std::memory_order_acquire)) continue;  // it came before the peer went
          failAwaited(pending, COMM_ERR_REMOTE, *failure, what, flight, pending[i].peer);
        }
      }
      if (deadline.expired()) return false;
    }
    transport::pauseOn(backoff, transport);
  }
}

void Communicator::waitAll(std::span<const Pending> pending, Deadline deadline,
                           const std::function<std::string()>& what, const std::function<void()>* check,
                           uint64_t flight) {
  if (progressUntil(pending, deadline, what, check, flight)) return;
  std::string peers;
  int firstPeer = -1;
  for (const Pending& p : pending) {
    if (p.request->done.load(std::memory_order_acquire)) continue;
    if (firstPeer < 0) firstPeer = p.peer;
    if (!peers.empty()) peers += ", ";
    peers += fmt::format("{} rank {}", p.isRecv ? "a message from" : "delivery to", p.peer);
  }
  failAwaited(pending, COMM_ERR_TIMEOUT, fmt::format("timed out after {} ms waiting for {}", timeout().count(), peers),
              what, flight, firstPeer);
}

void Communicator::beginChild(const char* call) {
  if (makingChild_.exchange(true)) {
    fail(COMM_ERR_INVALID_USAGE,
         "{}: another communicator is being made from '{}' (a call without blocking, or on another thread): wait "
         "for it first, or the ranks could take the two in different orders",
         call, name_);
  }
}

std::shared_ptr<Operation> Communicator::queueCollective(std::function<void(uint32_t sequence)> body, uint32_t sequence,
                                                         bool async, std::unique_lock<std::mutex>& lock) {
  auto operation = std::make_shared<TaskOperation>();
  executor_.submit([operation, body = std::move(body), sequence] {
    try {
      body(sequence);
      operation->complete(COMM_OK, "");
    } catch (const Error& e) {
      operation->complete(e.status(), e.what());
    } catch (const std::bad_alloc&) {
      operation->complete(COMM_ERR_NO_MEMORY, "out of memory");
    } catch (const std::exception& e) {
      operation->complete(COMM_ERR_INTERNAL, e.what());
    }
  });
  if (async) return operation;
  lock.unlock();
  comm_status_t status = operation->wait(Deadline::never());
  if (status != COMM_OK) throw Error(status, operation->message());
  return nullptr;
}

}  // namespace comm::core

namespace comm::core {

void Communicator::setStream(void* stream, int device) {
  // Device first: a reader that sees the stream sees its device.
  streamDevice_.store(device, std::memory_order_release);
  stream_.store(stream, std::memory_order_release);
}

cuda::StreamGate& Communicator::streamGate() {
  if (!gate_) gate_ = std::make_unique<cuda::StreamGate>();
  return *gate_;
}

cuda::IpcWorkspace& Communicator::ipcWorkspace() {
  if (!ipcWorkspace_) ipcWorkspace_ = std::make_unique<cuda::IpcWorkspace>();
  return *ipcWorkspace_;
}

void Communicator::failConcurrentIssue() const {
  fail(COMM_ERR_INVALID_USAGE,
       "another thread is issuing a collective on communicator '{}' at the same time: the ranks could pair the two "
       "calls in different orders; issue collectives on one communicator from one thread, or one after the other "
       "in the same order on every rank",
       name_);
}

int Communicator::nextChildIndex(const std::string& key) {
  std::lock_guard lock(childMutex_);
  return childCounts_[key]++;
}

}  // namespace comm::core
