#include "transport/tcp/connector.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <string_view>

#include "common/error.h"
#include "common/handshake.h"
#include "common/log.h"
#include "common/socket.h"
#include "transport/network_interface.h"

namespace comm::transport::tcp {
namespace {

// What a connection's proof of the job's secret is bound to (see
// common/handshake.h); the connecting rank's claim is its rank.
constexpr std::string_view kTcpContext = "comm tcp";
// How long connect() waits for every peer's connection when
// TcpOptions::connectTimeout does not say.
constexpr auto kConnectTimeout = std::chrono::milliseconds(120'000);
// Connections accepted and not yet proven: a stranger can open many and
// say nothing; beyond this many the oldest is closed, so that neither
// memory nor descriptors run out before the peers come.
constexpr size_t kMaxNewcomers = 64;

// The address to listen on: loopback when every rank is on this node, else
// that of the interface chooseInterface() picks.
in_addr listenAddress(const Options& options) {
  if (options.singleNode) return in_addr{htonl(INADDR_LOOPBACK)};
  const NetworkInterface chosen = chooseInterface(options.tcpInterface, options.masterAddr);
  log::info("tcp: listening on {}: {}", chosen.name, chosen.why);
  return chosen.address;
}

std::string remoteName(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  char text[INET_ADDRSTRLEN] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
  }
  return fmt::format("{}:{}", text, ntohs(address.sin_port));
}

int pollTimeout(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline.at() - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

}  // namespace

// A connection accepted during connect() whose peer has not yet proven
// the job's secret.
struct Newcomer {
  UniqueFd fd;
  std::string from;  // its address, for the log
  Handshake handshake;
  std::string out;  // handshake bytes not yet sent
  size_t sent = 0;
};

Connector::Connector(const Options& options)
    : secret_(options.secret),
      connectTimeout_(options.tcp.connectTimeout.count() > 0 ? options.tcp.connectTimeout : kConnectTimeout) {
  address_.sin_family = AF_INET;
  address_.sin_addr = listenAddress(options);
  listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener_.valid()) fail(COMM_ERR_TRANSPORT, "tcp: cannot make a socket: {}", errnoText(errno));
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&address_), sizeof address_) != 0 ||
      ::listen(listener_.get(), SOMAXCONN) != 0) {
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &address_.sin_addr, text, sizeof text);
    fail(COMM_ERR_TRANSPORT, "tcp: cannot listen on {}: {}", text, errnoText(errno));
  }
  socklen_t length = sizeof address_;
  getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address_), &length);
}

void Connector::connect(int selfRank, const std::vector<PeerInfo>& peers, std::vector<UniqueFd>& connections) {
  connections.resize(peers.size());
  self_ = selfRank;
  const Deadline deadline(connectTimeout_);
  // Each pair gets one connection: the higher rank calls, the lower one
  // accepts. A call completes once the callee accepts it and both have
  // proven the secret; the callee accepts once its own calls are done, and
  // rank 0 makes none, so the calls complete from the lowest rank up.
  int awaited = 0;
  for (int rank = 0; rank < static_cast<int>(peers.size()); ++rank) {
    const std::vector<uint8_t>& blob = peers[rank].address;
    if (rank == selfRank || blob.empty()) continue;
    if (rank > selfRank) {
      ++awaited;
      continue;
    }
    if (blob.size() != sizeof(sockaddr_in)) {
      fail(COMM_ERR_TRANSPORT, "tcp: rank {}'s address has {} bytes, not {}", rank, blob.size(), sizeof(sockaddr_in));
    }
    sockaddr_in to{};
    std::memcpy(&to, blob.data(), sizeof to);
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &to.sin_addr, text, sizeof text);
    const std::string where = fmt::format("{}:{}", text, ntohs(to.sin_port));
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) fail(COMM_ERR_TRANSPORT, "tcp: cannot make a socket: {}", errnoText(errno));
    while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
      if (errno == EINTR) continue;
      fail(COMM_ERR_TRANSPORT, "tcp: cannot connect to rank {} at {}: {}", rank, where, errnoText(errno));
    }
    Handshake handshake = Handshake::connecting(secret_, kTcpContext, static_cast<uint64_t>(selfRank));
    runHandshake(fd.get(), handshake, deadline, COMM_ERR_TRANSPORT, fmt::format("tcp: rank {} at {}", rank, where));
    connections[rank] = std::move(fd);
  }
  if (awaited > 0) acceptPeers(connections, awaited, deadline);
  listener_.reset();
}

void Connector::acceptPeers(std::vector<UniqueFd>& connections, int awaited, Deadline deadline) {
  std::deque<Newcomer> newcomers;  // oldest first
  std::vector<pollfd> fds;
  while (awaited > 0) {
    fds.assign(1, pollfd{listener_.get(), POLLIN, 0});
    for (const Newcomer& newcomer : newcomers) {
      fds.push_back(
          {newcomer.fd.get(), static_cast<short>(POLLIN | (newcomer.sent < newcomer.out.size() ? POLLOUT : 0)), 0});
    }
    if (poll(fds.data(), fds.size(), pollTimeout(deadline)) < 0 && errno != EINTR) {
      fail(COMM_ERR_TRANSPORT, "tcp: poll: {}", errnoText(errno));
    }
    // Backwards, so that erasing one leaves the indexes of the rest.
    for (size_t i = newcomers.size(); i-- > 0;) {
      if (fds[i + 1].revents != 0 && !advance(newcomers[i], connections, awaited))
        newcomers.erase(newcomers.begin() + i);
    }
    while (awaited > 0 && (fds[0].revents & POLLIN) != 0) {
      UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!fd.valid()) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        fail(COMM_ERR_TRANSPORT, "tcp: accept: {}", errnoText(errno));
      }
      if (newcomers.size() == kMaxNewcomers) {
        log::warn("tcp: closed the connection from {}: it did not prove the job's secret while {} others came",
                  newcomers.front().from, kMaxNewcomers);
        newcomers.pop_front();
      }
      std::string from = remoteName(fd.get());
      Newcomer& newcomer = newcomers.emplace_back(
          Newcomer{std::move(fd), std::move(from), Handshake::accepting(secret_, kTcpContext), {}, 0});
      if (!advance(newcomer, connections, awaited)) newcomers.pop_back();
    }
    if (awaited > 0 && deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "tcp: {} higher rank(s) did not connect within {} ms", awaited, connectTimeout_.count());
    }
  }
}

bool Connector::advance(Newcomer& newcomer, std::vector<UniqueFd>& connections, int& awaited) {
  auto turnAway = [&](std::string_view why) {
    log::warn("tcp: turned away the connection from {}: {}", newcomer.from, why);
    return false;
  };
  for (;;) {
    newcomer.out += newcomer.handshake.takeOutput();
    while (newcomer.sent < newcomer.out.size()) {
      const ssize_t n = ::send(newcomer.fd.get(), newcomer.out.data() + newcomer.sent,
                               newcomer.out.size() - newcomer.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return turnAway(fmt::format("sending failed: {}", errnoText(errno)));
      newcomer.sent += static_cast<size_t>(n);
    }
    switch (newcomer.handshake.state()) {
      case Handshake::State::kRefused: return turnAway(newcomer.handshake.refusal());
      case Handshake::State::kDone: {
        const uint64_t rank = newcomer.handshake.claim();
        if (rank <= static_cast<uint64_t>(self_) || rank >= connections.size() || connections[rank].valid()) {
          return turnAway(fmt::format("it proved the job's secret but says it is rank {}, which is not awaited", rank));
        }
        connections[rank] = std::move(newcomer.fd);
        --awaited;
        return false;
      }
      case Handshake::State::kRunning: break;
    }
    char buffer[Handshake::kAnswerBytes];
    const ssize_t n =
        ::recv(newcomer.fd.get(), buffer, std::min(sizeof buffer, newcomer.handshake.wanted()), MSG_DONTWAIT);
    if (n == 0) return turnAway("it closed the connection during the handshake");
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return turnAway(fmt::format("receiving failed: {}", errnoText(errno)));
    newcomer.handshake.feed(std::string_view(buffer, static_cast<size_t>(n)));
  }
}

}  // namespace comm::transport::tcp
