// StoreServer: one thread multiplexes every client with poll(). A client is
// served once it has proven the job's secret; until then its bytes are the
// handshake's, never requests. Its requests go to the StoreTable
// (store_table.h), which parks a get or wait whose keys are missing until
// the last of them is created, so clients never poll and an idle server
// sleeps in poll() until a client speaks or the destructor signals the
// eventfd. Everything it holds is bounded by StoreLimits.
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "bootstrap/store_table.h"
#include "common/error.h"
#include "common/handshake.h"
#include "common/log.h"
#include "common/socket.h"
#include "common/unique_fd.h"

namespace comm::bootstrap {
namespace {

// Per wake-up, one read of at most this much per client keeps one chatty
// client from starving the others.
constexpr size_t kReadChunk = 256 * 1024;
// Bytes of a request beyond its key and value (op, id, lengths).
constexpr size_t kRequestOverhead = 64;
// A flood of strangers is logged, not each of them.
constexpr size_t kLogEveryEviction = 100;

struct Connection {
  UniqueFd fd;
  std::string peer;                    // host:port
  std::string host;                    // the peer's address alone: connections per peer are counted by it
  std::optional<Handshake> handshake;  // until the client has proven the secret
  uint64_t arrival = 0;                // order of acceptance: the oldest unproven is closed first
  std::string in;
  std::string out;
  size_t outSent = 0;
  bool closing = false;

  size_t pendingReply() const { return out.size() - outSent; }
};

struct PeerAddress {
  std::string host;
  uint16_t port = 0;
};

PeerAddress peerAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  char host[NI_MAXHOST] = "?";
  char service[NI_MAXSERV] = "0";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                NI_NUMERICHOST | NI_NUMERICSERV);
  }
  return {host, static_cast<uint16_t>(std::atoi(service))};
}

// The server's thread: its connections, and the table their requests go to.
class ServerLoop final : private StoreReplies {
 public:
  ServerLoop(UniqueFd listener, int wakeFd, std::string name, std::string secret, StoreLimits limits,
             std::mutex& usageMutex, StoreUsage& usage)
      : listener_(std::move(listener)),
        wakeFd_(wakeFd),
        name_(std::move(name)),
        secret_(std::move(secret)),
        limits_(limits),
        usageMutex_(usageMutex),
        usage_(usage),
        table_(limits, *this) {}
  // The table answers through this object: it stays where it was made.
  ServerLoop(const ServerLoop&) = delete;
  ServerLoop& operator=(const ServerLoop&) = delete;

  // Serves until the wake eventfd becomes readable.
  void run() {
    std::vector<pollfd> fds;
    for (;;) {
      publishUsage();
      fds.clear();
      fds.push_back({wakeFd_, POLLIN, 0});
      // A negative fd is skipped by poll(): used while out of descriptors.
      fds.push_back({acceptPaused_ ? -1 : listener_.get(), POLLIN, 0});
      for (const auto& [fd, connection] : connections_) {
        // A client that does not take its answers is not read from until it
        // does: what it asks for would only pile up here.
        const bool reading = connection.pendingReply() < limits_.maxPendingReplyBytes;
        const bool pending = connection.pendingReply() > 0;
        fds.push_back({fd, static_cast<short>((reading ? POLLIN : 0) | (pending ? POLLOUT : 0)), 0});
      }
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        log::error("{}: poll failed ({}); the store stops serving", name_, errnoText(errno));
        return;
      }
      if (fds[0].revents != 0) return;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        Connection& connection = connections_.at(fds[i].fd);
        if (fds[i].revents & POLLOUT) {
          flush(connection);
          // Requests held back while its answers piled up.
          if (!connection.handshake) serve(connection);
        }
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) receive(connection);
      }
      if (fds[1].revents != 0) acceptConnections();
      closeFinished();
    }
  }

 private:
  void acceptConnections() {
    for (;;) {
      int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: a connection that has not proven the secret
          // gives its own up; without one, the listener would stay readable
          // and spin the loop, so accepting resumes once a client leaves.
          if (evictOldestUnproven(std::nullopt, "the server ran out of descriptors")) continue;
          log::warn("{}: cannot accept a client ({}); pausing until one disconnects", name_, errnoText(errno));
          acceptPaused_ = !connections_.empty();
        }
        return;
      }
      setNoDelay(fd);
      PeerAddress address = peerAddress(fd);
      if (unprovenFrom(address.host) >= limits_.maxUnprovenPerPeer) {
        evictOldestUnproven(address.host,
                            fmt::format("{} others from {} have not either", limits_.maxUnprovenPerPeer, address.host));
      }
      if (unproven_.size() >= limits_.maxUnproven) {
        evictOldestUnproven(std::nullopt, fmt::format("{} others have not either", limits_.maxUnproven));
      }
      Connection connection{.fd = UniqueFd(fd),
                            .peer = endpointName(address.host, address.port),
                            .host = address.host,
                            .handshake = Handshake::accepting(secret_, kStoreContext),
                            .arrival = nextArrival_++};
      log::debug("{}: client {} connected", name_, connection.peer);
      unproven_.emplace(connection.arrival, fd);
      Connection& added = connections_.emplace(fd, std::move(connection)).first->second;
      reply(added, added.handshake->takeOutput());
    }
  }

  size_t unprovenFrom(const std::string& host) const {
    size_t count = 0;
    for (const auto& [arrival, fd] : unproven_) count += connections_.at(fd).host == host ? 1 : 0;
    return count;
  }

  // Closes the oldest connection (from `host`, if given) that has not
  // proven the secret; false when there is none.
  bool evictOldestUnproven(const std::optional<std::string>& host, const std::string& because) {
    for (const auto& [arrival, fd] : unproven_) {
      Connection& connection = connections_.at(fd);
      if (host && connection.host != *host) continue;
      if (evictions_++ % kLogEveryEviction == 0) {
        log::warn("{}: closing client {}: it has not proven the job's secret and {} ({} such closed so far)", name_,
                  connection.peer, because, evictions_);
      }
      drop(fd);
      return true;
    }
    return false;
  }

  void receive(Connection& connection) {
    if (connection.closing) return;
    // Before the proof, read no more than the handshake takes: what follows
    // it is the client's first request.
    const size_t chunk = connection.handshake ? connection.handshake->wanted() : kReadChunk;
    const size_t used = connection.in.size();
    connection.in.resize(used + chunk);
    ssize_t got = recv(connection.fd.get(), connection.in.data() + used, chunk, 0);
    connection.in.resize(used + (got > 0 ? got : 0));
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      log::debug("{}: client {} disconnected{}", name_, connection.peer, got < 0 ? " (" + errnoText(errno) + ")" : "");
      connection.closing = true;
      return;
    }
    if (connection.handshake) return prove(connection);
    serve(connection);
  }

  void prove(Connection& connection) {
    Handshake& handshake = *connection.handshake;
    handshake.feed(std::exchange(connection.in, {}));
    if (handshake.state() == Handshake::State::kRefused) {
      log::warn("{}: dropping client {}: {}", name_, connection.peer, handshake.refusal());
      connection.closing = true;
    } else if (handshake.state() == Handshake::State::kDone) {
      reply(connection, handshake.takeOutput());
      connection.handshake.reset();
      unproven_.erase(connection.arrival);
      log::debug("{}: client {} proved the job's secret", name_, connection.peer);
    }
  }

  // Handles the complete requests received, while the client takes its answers.
  void serve(Connection& connection) {
    size_t consumed = 0;
    std::string_view buffer(connection.in);
    try {
      const size_t limit = limits_.maxKeyBytes + limits_.maxValueBytes + kRequestOverhead;
      while (!connection.closing && connection.pendingReply() < limits_.maxPendingReplyBytes) {
        std::optional<uint32_t> body = completeFrame(buffer.substr(consumed), limit);
        if (!body) break;
        table_.handle(connection.fd.get(), decodeRequest(buffer.substr(consumed + kFrameHeaderBytes, *body),
                                                         limits_.maxKeyBytes, limits_.maxValueBytes));
        consumed += kFrameHeaderBytes + *body;
      }
      connection.in.erase(0, consumed);
    } catch (const Error& error) {
      // The request's id comes right after its op: with it, the client
      // learns why instead of only seeing the connection end.
      constexpr size_t kIdEnd = kFrameHeaderBytes + 1 + sizeof(uint64_t);
      const std::string_view request = buffer.substr(consumed);
      if (request.size() >= kIdEnd) {
        refuse(connection, FrameReader(request.substr(kFrameHeaderBytes + 1, sizeof(uint64_t))).u64(), error.what());
      } else {
        log::warn("{}: dropping client {}: {}", name_, connection.peer, error.what());
        connection.closing = true;
      }
    }
  }

  // Answers `request` with an error naming the limit it passes, and drops
  // the client.
  void refuse(Connection& connection, uint64_t id, const std::string& why) {
    log::warn("{}: dropping client {}: {}", name_, connection.peer, why);
    reply(connection, errorFrame(id, why));
    connection.closing = true;
  }

  void reply(Connection& connection, std::string frame) {
    if (connection.closing) return;
    connection.out.append(frame);
    flush(connection);
  }

  void reply(int client, std::string frame) override {
    if (auto connection = connections_.find(client); connection != connections_.end()) {
      reply(connection->second, std::move(frame));
    }
  }

  void refuse(int client, uint64_t id, const std::string& why) override {
    if (auto connection = connections_.find(client); connection != connections_.end()) {
      refuse(connection->second, id, why);
    }
  }

  void flush(Connection& connection) {
    while (!connection.closing && connection.outSent < connection.out.size()) {
      ssize_t sent = send(connection.fd.get(), connection.out.data() + connection.outSent,
                          connection.out.size() - connection.outSent, MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        log::debug("{}: client {} is gone ({})", name_, connection.peer, errnoText(errno));
        connection.closing = true;
        return;
      }
      connection.outSent += sent;
    }
    connection.out.clear();
    connection.outSent = 0;
  }

  // Closes `fd` and frees everything its client left: parked waits and
  // their places in the keys' lists.
  void drop(int fd) {
    auto found = connections_.find(fd);
    if (found == connections_.end()) return;
    if (found->second.handshake) unproven_.erase(found->second.arrival);
    table_.dropClient(fd);
    connections_.erase(found);
    acceptPaused_ = false;
  }

  void closeFinished() {
    std::vector<int> finished;
    for (const auto& [fd, connection] : connections_) {
      if (connection.closing) finished.push_back(fd);
    }
    for (int fd : finished) drop(fd);
  }

  void publishUsage() {
    StoreUsage now{.clients = connections_.size(),
                   .unproven = unproven_.size(),
                   .bytesHeld = table_.bytesHeld(),
                   .parkedWaits = table_.parkedWaits(),
                   .parkedKeys = table_.parkedKeys(),
                   .pendingReplyBytes = 0};
    for (const auto& [fd, connection] : connections_) now.pendingReplyBytes += connection.pendingReply();
    std::lock_guard lock(usageMutex_);
    usage_ = now;
  }

  UniqueFd listener_;
  int wakeFd_;
  std::string name_;
  std::string secret_;
  StoreLimits limits_;
  std::mutex& usageMutex_;
  StoreUsage& usage_;
  bool acceptPaused_ = false;
  std::unordered_map<int, Connection> connections_;
  std::map<uint64_t, int> unproven_;  // fds of the connections not yet proven, by arrival
  uint64_t nextArrival_ = 0;
  uint64_t evictions_ = 0;
  StoreTable table_;
};

UniqueFd listenOn(const std::string& host, uint16_t port) {
  const std::string where = endpointName(host, port);
  AddrInfoList addresses;
  if (int status = resolveTcp(host, port, true, addresses); status != 0) {
    fail(COMM_ERR_BOOTSTRAP, "store server: cannot resolve {}: {}", where, gai_strerror(status));
  }
  int lastError = 0;
  for (addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    UniqueFd fd(socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address->ai_protocol));
    if (!fd.valid()) {
      lastError = errno;
      continue;
    }
    // Lets a restarted job reuse its fixed master port while the previous
    // run's connections sit in TIME_WAIT.
    int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd.get(), address->ai_addr, address->ai_addrlen) == 0 && listen(fd.get(), SOMAXCONN) == 0) {
      return fd;
    }
    lastError = errno;
  }
  fail(COMM_ERR_BOOTSTRAP, "store server: cannot listen on {}: {}", where, errnoText(lastError));
}

uint16_t boundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    fail(COMM_ERR_BOOTSTRAP, "store server: getsockname failed: {}", errnoText(errno));
  }
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

struct StoreServer::Impl {
  UniqueFd wake;
  uint16_t port = 0;
  std::mutex usageMutex;
  StoreUsage usage;
  std::thread thread;
};

StoreServer::StoreServer(const std::string& host, uint16_t port, const std::string& secret, StoreLimits limits)
    : impl_(std::make_unique<Impl>()) {
  if (secret.empty()) fail(COMM_ERR_INVALID_ARGUMENT, "store server: no job secret for clients to prove");
  UniqueFd listener = listenOn(host, port);
  impl_->port = boundPort(listener.get());
  impl_->wake.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->wake.valid()) fail(COMM_ERR_BOOTSTRAP, "store server: eventfd failed: {}", errnoText(errno));
  std::string name = "store server on " + endpointName(host, impl_->port);
  log::debug("{}: listening", name);
  auto loop = std::make_unique<ServerLoop>(std::move(listener), impl_->wake.get(), std::move(name), secret, limits,
                                           impl_->usageMutex, impl_->usage);
  impl_->thread = std::thread([loop = std::move(loop)] {
    try {
      loop->run();
    } catch (const std::exception& error) {
      log::error("store server stopped: {}", error.what());
    }
  });
}

StoreServer::~StoreServer() {
  uint64_t one = 1;
  // Cannot fail short of a corrupt descriptor: the counter is far from overflow.
  [[maybe_unused]] ssize_t written = write(impl_->wake.get(), &one, sizeof(one));
  impl_->thread.join();
}

uint16_t StoreServer::port() const { return impl_->port; }

StoreUsage StoreServer::usage() const {
  std::lock_guard lock(impl_->usageMutex);
  return impl_->usage;
}

}  // namespace comm::bootstrap
