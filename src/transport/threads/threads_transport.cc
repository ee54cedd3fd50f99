#include "transport/threads/threads_transport.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "common/error.h"
#include "transport/threads/mailbox.h"

namespace comm::transport {
namespace threads {
namespace {

// What a rank publishes: its process and its mailbox's id there.
struct Address {
  uint64_t pid;
  uint64_t id;
};

// Every live rank's mailbox in this process, by id. A transport holds its
// peers' mailboxes (shared), so a rank that leaves first leaves a closed
// mailbox behind, never a freed one.
class Registry {
 public:
  uint64_t add(std::shared_ptr<Mailbox> mailbox) {
    std::lock_guard lock(mutex_);
    const uint64_t id = ++lastId_;
    mailboxes_.emplace(id, std::move(mailbox));
    return id;
  }
  std::shared_ptr<Mailbox> find(uint64_t id) {
    std::lock_guard lock(mutex_);
    auto found = mailboxes_.find(id);
    return found == mailboxes_.end() ? nullptr : found->second;
  }
  void remove(uint64_t id) {
    std::lock_guard lock(mutex_);
    mailboxes_.erase(id);
  }

 private:
  std::mutex mutex_;  // guards everything below
  uint64_t lastId_ = 0;
  std::unordered_map<uint64_t, std::shared_ptr<Mailbox>> mailboxes_;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

class ThreadsTransport final : public Transport {
 public:
  ThreadsTransport() : mailbox_(std::make_shared<Mailbox>()), id_(registry().add(mailbox_)) {}
  ~ThreadsTransport() override;

  std::vector<uint8_t> localAddress() const override {
    const Address address{static_cast<uint64_t>(getpid()), id_};
    const auto* bytes = reinterpret_cast<const uint8_t*>(&address);
    return {bytes, bytes + sizeof address};
  }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override;
  // Done at once: the bytes are in the receive or in a copy.
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override {
    request.restart();
    if (!mailboxOf(peer).deliver(self_, tag, data, size)) {
      request.fail(COMM_ERR_REMOTE, "{}: rank {} has left", kThreadsProvider, peer);
    }
    request.markDone();
  }
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override {
    mailboxOf(peer);  // a peer this rank knows
    mailbox_->post(peer, tag, data, size, request);
  }
  // Sends are done when posted; a receive is withdrawn from this rank's mailbox.
  void cancel(Request& request) override { mailbox_->cancel(request); }
  // The sending thread completes every receive.
  bool progress() override { return false; }
  std::string providerFor(int) const override { return kThreadsProvider; }

 private:
  Mailbox& mailboxOf(int peer) const {
    if (peer < 0 || static_cast<size_t>(peer) >= peers_.size()) {
      fail(COMM_ERR_INVALID_ARGUMENT, "{}: no rank {} ({} ranks connected)", kThreadsProvider, peer, peers_.size());
    }
    return *peers_[peer];
  }

  std::shared_ptr<Mailbox> mailbox_;
  uint64_t id_;
  int self_ = -1;
  std::vector<std::shared_ptr<Mailbox>> peers_;  // by rank; peers_[self_] is mailbox_
};

ThreadsTransport::~ThreadsTransport() {
  registry().remove(id_);
  mailbox_->close();
  for (size_t rank = 0; rank < peers_.size(); ++rank) {
    if (static_cast<int>(rank) != self_) peers_[rank]->peerLeft(self_);
  }
}

void ThreadsTransport::connect(int selfRank, const std::vector<PeerInfo>& peers) {
  if (!peers_.empty()) fail(COMM_ERR_INVALID_USAGE, "{}: connect called twice", kThreadsProvider);
  std::vector<std::shared_ptr<Mailbox>> found(peers.size());
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    Address address{};
    if (peers[rank].address.size() != sizeof address) {
      fail(COMM_ERR_TRANSPORT, "{}: rank {} offers no address of this transport (is its provider {} too?)",
           kThreadsProvider, rank, kThreadsProvider);
    }
    std::memcpy(&address, peers[rank].address.data(), sizeof address);
    if (address.pid != static_cast<uint64_t>(getpid())) {
      fail(COMM_ERR_TRANSPORT, "{}: rank {} is process {}, not this one: the {} transport joins threads of one process",
           kThreadsProvider, rank, address.pid, kThreadsProvider);
    }
    found[rank] = registry().find(address.id);
    if (!found[rank]) {
      // It finished and left before this rank connected (a scatter's root
      // needs nobody to connect to it): what it sent waits in this rank's
      // mailbox already, and a closed one stands in for its own.
      found[rank] = std::make_shared<Mailbox>();
      found[rank]->close();
      mailbox_->peerLeft(static_cast<int>(rank));
    }
  }
  self_ = selfRank;
  peers_ = std::move(found);
}

}  // namespace
}  // namespace threads

std::unique_ptr<Transport> createThreadsTransport() { return std::make_unique<threads::ThreadsTransport>(); }

}  // namespace comm::transport
