#include "core/communicator.h"

#include <algorithm>

#include "common/backoff.h"
#include "common/error.h"
#include "common/log.h"
#include "core/operation.h"

namespace comm::core {
Communicator::Communicator(std::shared_ptr<World> world, uint16_t id, std::vector<int> worldRanks, std::string name)
    : world_(std::move(world)),
      id_(id),
      worldRanks_(std::move(worldRanks)),
      name_(std::move(name)),
      timeoutMs_(world_->timeout().count()) {
  chunkedMessages_ = size() > 1;
  for (int r = 0; r < size(); ++r) {
    int w = worldRanks_[r];
    if (w == world_->rank()) rank_ = r;
    if (world_->peer(w).sameNode) {
      if (rank_ < 0) ++localRank_;
      ++localSize_;
    }
    if (w != world_->rank() && !world_->transport().wantsChunkedMessages(w)) chunkedMessages_ = false;
  }
  layOutNodes();
  board_ = NodeBoard::join(*world_, id_, worldRanks_, rank_);
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
    nodes_.indexOnNode.push_back(static_cast<int>(nodes_.members[node].size()));
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
  }
}

Communicator::~Communicator() {
  executor_.drain();
  if (id_ != 0) world_->releaseCommunicatorId(id_, size());
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

void Communicator::abandon(std::deque<transport::Request>&& requests, std::span<const Pending> pending) {
  cancel(pending);
  auto allDone = [&] {
    return std::all_of(pending.begin(), pending.end(),
                       [](const Pending& p) { return p.request->done.load(std::memory_order_acquire); });
  };
  Deadline grace(std::chrono::seconds(2));
  Backoff backoff;
  while (!allDone() && !grace.expired()) {
    if (!world_->transport().progress()) backoff.pause();
  }
  if (!allDone()) {
    static std::mutex graveyardMutex;
    static auto* graveyard = new std::vector<std::deque<transport::Request>>();
    std::lock_guard lock(graveyardMutex);
    graveyard->push_back(std::move(requests));
    log::warn("{} messages on '{}' did not finish after a failure; their bookkeeping is kept alive", pending.size(),
              name_);
  }
}

void Communicator::failAwaited(std::span<const Pending> pending, comm_status_t status, const std::string& why,
                               const std::function<std::string()>& what) {
  cancel(pending);
  throw Error(status, fmt::format("{}: {}", what(), why));
}

bool Communicator::progressUntil(std::span<const Pending> pending, Deadline deadline,
                                 const std::function<std::string()>& what, const std::function<void()>* check) {
  transport::Transport& transport = world_->transport();
  if (aborted()) failAwaited(pending, COMM_ERR_ABORTED, "the communicator was aborted", what);
  Backoff backoff;
  auto nextCheck = Clock::now() + kHealthCheckInterval;
  size_t firstOpen = 0;
  for (;;) {
    while (firstOpen < pending.size() && pending[firstOpen].request->done.load(std::memory_order_acquire)) {
      const transport::Request& r = *pending[firstOpen].request;
      if (r.status != COMM_OK) {
        failAwaited(pending, r.status,
                    fmt::format("{} rank {}: {}", pending[firstOpen].isRecv ? "receiving from" : "sending to",
                                pending[firstOpen].peer, r.error),
                    what);
      }
      ++firstOpen;
    }
    if (firstOpen == pending.size()) return true;
    if (transport.progress()) {
      if (check) (*check)();
      backoff.reset();
      continue;
    }
    if (aborted()) failAwaited(pending, COMM_ERR_ABORTED, "the communicator was aborted", what);
    auto now = Clock::now();
    if (now >= nextCheck) {
      nextCheck = now + kHealthCheckInterval;
      if (check) (*check)();
      for (size_t i = firstOpen; i < pending.size(); ++i) {
        if (pending[i].request->done.load(std::memory_order_acquire)) continue;
        if (auto failure = world_->peerFailure(worldRanks_[pending[i].peer])) {
          if (pending[i].request->done.load(std::memory_order_acquire)) continue;  // it came before the peer went
          failAwaited(pending, COMM_ERR_REMOTE, *failure, what);
        }
      }
      if (deadline.expired()) return false;
    }
    backoff.pause(transport.busy());
  }
}

void Communicator::waitAll(std::span<const Pending> pending, Deadline deadline,
                           const std::function<std::string()>& what, const std::function<void()>* check) {
  if (progressUntil(pending, deadline, what, check)) return;
  std::string peers;
  for (const Pending& p : pending) {
    if (p.request->done.load(std::memory_order_acquire)) continue;
    if (!peers.empty()) peers += ", ";
    peers += fmt::format("{} rank {}", p.isRecv ? "a message from" : "delivery to", p.peer);
  }
  failAwaited(pending, COMM_ERR_TIMEOUT, fmt::format("timed out after {} ms waiting for {}", timeout().count(), peers),
              what);
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

int Communicator::nextChildIndex(const std::string& key) {
  std::lock_guard lock(issueMutex_);
  return childCounts_[key]++;
}

}  // namespace comm::core
