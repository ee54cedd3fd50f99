// StoreServer: one thread multiplexes every client with poll(). A client is
// served once it has proven the job's secret; until then its bytes are the
// handshake's, never requests. A get or wait
// whose keys are missing parks as a Waiter and is answered when the last of
// its keys is created, so clients never poll and an idle server sleeps in
// poll() until a client speaks or the destructor signals the eventfd.
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
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

struct Connection {
  UniqueFd fd;
  std::string peer;
  std::optional<Handshake> handshake;  // until the client has proven the secret
  std::string in;
  std::string out;
  size_t outSent = 0;
  bool closing = false;
};

// A get or wait that arrived before all of its keys existed.
struct Waiter {
  int fd;
  uint64_t requestId;
  StoreOp op;
  std::string key;  // the key whose value a get returns
  size_t missing;   // how many of its keys are still absent
};

std::string peerName(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  char host[NI_MAXHOST] = "?";
  char service[NI_MAXSERV] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                NI_NUMERICHOST | NI_NUMERICSERV);
  }
  return endpointName(host, static_cast<uint16_t>(std::atoi(service)));
}

std::string okFrame(uint64_t id) { return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).finish(); }

class ServerLoop {
 public:
  ServerLoop(UniqueFd listener, int wakeFd, std::string name, std::string secret)
      : listener_(std::move(listener)), wakeFd_(wakeFd), name_(std::move(name)), secret_(std::move(secret)) {}

  // Serves until the wake eventfd becomes readable.
  void run() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({wakeFd_, POLLIN, 0});
      // A negative fd is skipped by poll(): used while out of descriptors.
      fds.push_back({acceptPaused_ ? -1 : listener_.get(), POLLIN, 0});
      for (const auto& [fd, connection] : connections_) {
        const bool pending = connection.outSent < connection.out.size();
        fds.push_back({fd, static_cast<short>(POLLIN | (pending ? POLLOUT : 0)), 0});
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
        if (fds[i].revents & POLLOUT) flush(connection);
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
          // The listener would stay readable and spin the loop; resume once a
          // client leaves and frees a descriptor.
          log::warn("{}: cannot accept a client ({}); pausing until one disconnects", name_, errnoText(errno));
          acceptPaused_ = !connections_.empty();
        }
        return;
      }
      setNoDelay(fd);
      Connection connection{
          .fd = UniqueFd(fd), .peer = peerName(fd), .handshake = Handshake::accepting(secret_, kStoreContext)};
      log::debug("{}: client {} connected", name_, connection.peer);
      Connection& added = connections_.emplace(fd, std::move(connection)).first->second;
      reply(added, added.handshake->takeOutput());
    }
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
    try {
      size_t consumed = 0;
      std::string_view buffer(connection.in);
      while (auto body = completeFrame(buffer.substr(consumed))) {
        handle(connection, buffer.substr(consumed + kFrameHeaderBytes, *body));
        consumed += kFrameHeaderBytes + *body;
      }
      connection.in.erase(0, consumed);
    } catch (const Error& error) {
      log::warn("{}: dropping client {}: {}", name_, connection.peer, error.what());
      connection.closing = true;
    }
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
      log::debug("{}: client {} proved the job's secret", name_, connection.peer);
    }
  }

  void handle(Connection& connection, std::string_view body) {
    FrameReader request(body);
    const auto op = static_cast<StoreOp>(request.u8());
    const uint64_t id = request.u64();
    switch (op) {
      case StoreOp::kSet: {
        std::string key = request.bytes();
        std::string value = request.bytes();
        expectEnd(request, "set");
        const bool created = data_.insert_or_assign(key, std::move(value)).second;
        reply(connection, okFrame(id));
        if (created) keyCreated(key);
        return;
      }
      case StoreOp::kGet: {
        std::string key = request.bytes();
        expectEnd(request, "get");
        if (auto found = data_.find(key); found != data_.end()) {
          reply(connection, valueFrame(id, found->second));
        } else {
          std::vector<std::string> missing{key};
          park(connection, id, op, std::move(key), missing);
        }
        return;
      }
      case StoreOp::kWait: {
        std::unordered_set<std::string> missing;
        for (uint32_t count = request.u32(); count > 0; --count) {
          std::string key = request.bytes();
          if (!data_.contains(key)) missing.insert(std::move(key));
        }
        expectEnd(request, "wait");
        if (missing.empty()) {
          reply(connection, okFrame(id));
        } else {
          park(connection, id, op, {}, std::vector<std::string>(missing.begin(), missing.end()));
        }
        return;
      }
      case StoreOp::kAdd: {
        std::string key = request.bytes();
        const int64_t delta = request.i64();
        expectEnd(request, "add");
        add(connection, id, key, delta);
        return;
      }
      case StoreOp::kCheck: {
        std::string key = request.bytes();
        expectEnd(request, "check");
        auto found = data_.find(key);
        reply(connection, found != data_.end() ? valueFrame(id, found->second)
                                               : FrameWriter().u64(id).u8(uint8_t(StoreStatus::kMissing)).finish());
        return;
      }
    }
    fail(COMM_ERR_BOOTSTRAP, "unknown operation {}", static_cast<int>(op));
  }

  void add(Connection& connection, uint64_t id, const std::string& key, int64_t delta) {
    int64_t value = 0;
    auto found = data_.find(key);
    if (found != data_.end()) {
      const std::string& text = found->second;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        reply(connection, errorFrame(id, fmt::format("add('{}'): the value there is not an integer", key)));
        return;
      }
    }
    if (__builtin_add_overflow(value, delta, &value)) {
      reply(connection, errorFrame(id, fmt::format("add('{}', {}): the result overflows int64", key, delta)));
      return;
    }
    const bool created = found == data_.end();
    data_[key] = std::to_string(value);
    reply(connection, FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).i64(value).finish());
    if (created) keyCreated(key);
  }

  static void expectEnd(const FrameReader& request, std::string_view what) {
    if (!request.done()) fail(COMM_ERR_BOOTSTRAP, "malformed {} request (trailing bytes)", what);
  }

  static std::string valueFrame(uint64_t id, std::string_view value) {
    return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).bytes(value).finish();
  }
  static std::string errorFrame(uint64_t id, std::string_view message) {
    return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kError)).bytes(message).finish();
  }

  void park(Connection& connection, uint64_t id, StoreOp op, std::string key, const std::vector<std::string>& missing) {
    const uint64_t waiterId = nextWaiter_++;
    waiters_.emplace(waiterId, Waiter{connection.fd.get(), id, op, std::move(key), missing.size()});
    for (const std::string& absent : missing) waitersByKey_[absent].push_back(waiterId);
  }

  void keyCreated(const std::string& key) {
    auto parked = waitersByKey_.extract(key);
    if (parked.empty()) return;
    for (uint64_t waiterId : parked.mapped()) {
      auto found = waiters_.find(waiterId);
      // Waiters of clients that left were erased; their ids are stale here.
      if (found == waiters_.end() || --found->second.missing > 0) continue;
      const Waiter& waiter = found->second;
      auto connection = connections_.find(waiter.fd);
      if (connection != connections_.end()) {
        reply(connection->second, waiter.op == StoreOp::kGet ? valueFrame(waiter.requestId, data_.at(waiter.key))
                                                             : okFrame(waiter.requestId));
      }
      waiters_.erase(found);
    }
  }

  void reply(Connection& connection, std::string frame) {
    if (connection.closing) return;
    connection.out.append(frame);
    flush(connection);
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

  void closeFinished() {
    std::erase_if(connections_, [this](const auto& entry) {
      if (!entry.second.closing) return false;
      std::erase_if(waiters_, [fd = entry.first](const auto& waiter) { return waiter.second.fd == fd; });
      acceptPaused_ = false;
      return true;
    });
  }

  UniqueFd listener_;
  int wakeFd_;
  std::string name_;
  std::string secret_;
  bool acceptPaused_ = false;
  std::unordered_map<int, Connection> connections_;
  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::unordered_map<std::string, std::vector<uint64_t>> waitersByKey_;
  uint64_t nextWaiter_ = 0;
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
  std::thread thread;
};

StoreServer::StoreServer(const std::string& host, uint16_t port, const std::string& secret)
    : impl_(std::make_unique<Impl>()) {
  if (secret.empty()) fail(COMM_ERR_INVALID_ARGUMENT, "store server: no job secret for clients to prove");
  UniqueFd listener = listenOn(host, port);
  impl_->port = boundPort(listener.get());
  impl_->wake.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->wake.valid()) fail(COMM_ERR_BOOTSTRAP, "store server: eventfd failed: {}", errnoText(errno));
  std::string name = "store server on " + endpointName(host, impl_->port);
  log::debug("{}: listening", name);
  impl_->thread =
      std::thread([loop = ServerLoop(std::move(listener), impl_->wake.get(), std::move(name), secret)]() mutable {
        try {
          loop.run();
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

}  // namespace comm::bootstrap
