#include "transport/tcp/tcp_transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/deadline.h"
#include "common/error.h"
#include "common/handshake.h"
#include "common/log.h"
#include "common/socket.h"
#include "common/unique_fd.h"
#include "transport/matching_engine.h"
#include "transport/network_interface.h"
#include "transport/record_pool.h"
#include "transport/tcp/payload_pool.h"
#include "transport/tcp/tcp_wire.h"

namespace comm::transport {
namespace {

using tcp::checkHeader;
using tcp::decodeHeader;
using tcp::Header;
using tcp::kEagerBytes;
using tcp::kInboxBytes;
using tcp::Kind;
using tcp::payloadBytes;

// What a connection's proof of the job's secret is bound to (see
// common/handshake.h); the connecting rank's claim is its rank.
constexpr std::string_view kTcpContext = "comm tcp";

// The most queued messages one sendmsg gathers.
constexpr size_t kSendsPerCall = 16;
// Up to this many peers progress() tries a recv() on each it reads instead
// of asking epoll which are readable: one system call per peer when idle,
// and when a message is there, one fewer than epoll_wait plus the recv().
constexpr size_t kDirectReadPeers = 3;
// How often progress() reads connections that nothing of this rank waits
// for: their early messages, a dead peer's end of stream. Between those
// looks they wait in the kernel; reading them sooner would only move them
// to the unexpected list, at one system call per connection and look, and
// where ranks share cores those calls take the time of the ranks with
// work.
constexpr auto kQuietReadInterval = std::chrono::microseconds(200);
// How long connect() waits for every peer's connection when
// Options::connectTimeout does not say.
constexpr auto kConnectTimeout = std::chrono::milliseconds(120'000);
// Connections accepted and not yet proven: a stranger can open many and
// say nothing; beyond this many the oldest is closed, so that neither
// memory nor descriptors run out before the peers come.
constexpr size_t kMaxNewcomers = 64;

void complete(Request& request, comm_status_t status, std::string_view error = {}) {
  if (status != COMM_OK) request.fail(status, "{}", error);
  request.markDone();
}

// Where a receive's message goes.
struct Destination {
  uint64_t tag = 0;
  char* data = nullptr;
  size_t size = 0;
  Request* request = nullptr;
};

// A receive posted before its message came (in its connection's matching
// engine).
struct Receive : Destination {
  Receive* prev = nullptr;
  Receive* next = nullptr;
};

// A message that arrived before its receive was posted (matching_engine.h):
// an eager one with its bytes, or a request-to-send.
struct Arrival {
  uint64_t tag = 0;
  size_t size = 0;
  std::unique_ptr<char[]> data;
  bool complete = false;
  Destination claim;        // the receive waiting for the rest of it, if any (claim.request)
  bool rendezvous = false;  // a kRequestToSend: no bytes here
  uint32_t sendId = 0;      // ... and the sender's number for it
  Arrival* prev = nullptr;
  Arrival* next = nullptr;
};

using Matching = MatchingEngine<Receive, Arrival>;

struct QueuedSend {
  Header header;
  const char* data;
  Request* request;              // null for control messages and sends cancelled mid-way
  size_t sent = 0;               // of sizeof(Header) + payloadBytes(header)
  std::unique_ptr<char[]> copy;  // what `data` points into once the caller's buffer was given back
};

// A large message announced and waiting for the receiver's go-ahead.
struct AnnouncedSend {
  const char* data;
  size_t size;
  Request* request;
};

// The payload being read and where it goes.
struct Incoming {
  bool active = false;
  char* destination = nullptr;  // null: read and dropped (a cancelled or mismatched receive)
  size_t size = 0;
  size_t got = 0;
  Request* request = nullptr;     // completed once the payload is in
  Arrival* unexpected = nullptr;  // or the arrival it fills
  size_t remaining() const { return size - got; }
};

struct Connection {
  int peer = -1;
  UniqueFd fd;
  std::string deadWhy;                         // non-empty once the connection is gone
  comm_status_t deadStatus = COMM_ERR_REMOTE;  // what requests to it fail with then
  std::deque<QueuedSend> sends;
  Matching matching;                                      // receives posted, arrivals (Incoming points into them)
  std::unordered_map<uint32_t, AnnouncedSend> announced;  // by the sender's number
  std::unordered_set<uint32_t> withdrawn;  // announced, then cancelled: answered with kWithdrawn when cleared
  uint32_t nextSendId = 0;
  std::unordered_map<uint32_t, Destination> cleared;  // receives told to come, by the receiver's number;
                                                      // data and request null: dropped on arrival
  uint32_t nextRecvId = 0;
  std::unique_ptr<char[]> inbox = std::make_unique_for_overwrite<char[]>(kInboxBytes);
  size_t inStart = 0;
  size_t inEnd = 0;
  Incoming incoming;

  bool dead() const { return !deadWhy.empty(); }
};

// Completes `receive` with a whole message from `peer`: its bytes, or a
// mismatch when the sizes differ.
void fill(const Destination& receive, int peer, uint64_t tag, const char* data, size_t size) {
  receiveWhole(*receive.request, kTcpProvider, peer, tag, receive.data, receive.size, data, size);
  receive.request->markDone();
}

// Fails `receive`, which a message of `size` bytes met.
void mismatched(const Destination& receive, int peer, uint64_t tag, size_t size) {
  failMismatch(*receive.request, kTcpProvider, peer, tag, size, receive.size);
  receive.request->markDone();
}

// Whether something this rank started waits for what comes on `c`: a
// receive, a go-ahead for an announced or withdrawn send, the rest of a
// payload.
bool awaited(const Connection& c) {
  return c.matching.hasReceives() || !c.announced.empty() || !c.withdrawn.empty() || !c.cleared.empty() ||
         c.incoming.active;
}

// The address to listen on: loopback when every rank is on this node, else
// that of the interface chooseInterface() picks.
in_addr listenAddress(const Options& options) {
  if (options.singleNode) return in_addr{htonl(INADDR_LOOPBACK)};
  const NetworkInterface chosen = chooseInterface(options.tcpInterface, options.masterAddr);
  log::info("tcp: listening on {}: {}", chosen.name, chosen.why);
  return chosen.address;
}

// A connection accepted during connect() whose peer has not yet proven
// the job's secret.
struct Newcomer {
  UniqueFd fd;
  std::string from;  // its address, for the log
  Handshake handshake;
  std::string out;  // handshake bytes not yet sent
  size_t sent = 0;
};

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

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const Options& options);
  ~TcpTransport() override;

  std::vector<uint8_t> localAddress() const override {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&address_);
    return {bytes, bytes + sizeof address_};
  }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override;
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override;
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override;
  void cancel(Request& request) override;
  bool busy() const override { return busy_.load(std::memory_order_relaxed); }
  bool waitReady(std::chrono::microseconds limit) override;
  bool progress() override;
  std::string providerFor(int) const override { return kTcpProvider; }
  // A message is one stream on the peer's socket: a forwarder sees none of
  // it until all of it is in.
  bool wantsChunkedMessages(bool) const override { return true; }

 private:
  Connection& connection(int peer);
  // Makes `fd` the non-blocking connection to `peer`.
  void adopt(int peer, UniqueFd fd);
  // Accepts connections until `awaited` higher ranks have proven the secret.
  void acceptPeers(int awaited, Deadline deadline);
  // Moves a newcomer's handshake on; returns false when it is over (the
  // peer adopted or turned away).
  bool advance(Newcomer& newcomer, int& awaited);
  // Each returns true when a request completed.
  bool readFrom(Connection& c);
  bool writeTo(Connection& c);
  bool startMessage(Connection& c, const Header& header);
  bool finishIncoming(Connection& c);
  bool deliver(Connection& c, Arrival& message, const Destination& receive);
  // Answers the announcement of message `sendId` (`size` bytes) with the
  // go-ahead for `receive`; returns true when it completed the receive (a
  // size mismatch: the payload is then dropped on arrival).
  bool clearToSend(Connection& c, uint64_t tag, size_t size, uint32_t sendId, const Destination& receive);
  // The first receive posted on `c` for `tag`, taken off its queue.
  std::optional<Destination> takeReceive(Connection& c, uint64_t tag);
  // A record for an arrival of `size` bytes with `tag`, its other fields unset.
  Arrival* newArrival(uint64_t tag, size_t size);
  // Lets go of `message` and its buffer.
  void forget(Connection& c, Arrival& message);
  // Gives `request`'s buffer back to the caller if it is a send to `c`'s
  // peer; returns whether it was.
  bool cancelSend(Connection& c, Request& request);
  void queue(Connection& c, const Header& header, const char* data, Request* request);
  // A message to this rank: delivered (or kept as unexpected) at once.
  void sendToSelf(Connection& c, uint64_t tag, const char* data, size_t size, Request& request);
  // Fails everything pending with the peer: COMM_ERR_REMOTE when it went
  // away, COMM_ERR_TRANSPORT when it broke the protocol. `quiet`: an expected
  // end (the peer said goodbye), logged at debug level only.
  void markDead(Connection& c, std::string why, comm_status_t status = COMM_ERR_REMOTE, bool quiet = false);
  // Whether an arrival of `cost` from `c`'s peer fits the budget; past it,
  // fails the connection and returns false.
  bool admit(Connection& c, size_t cost);
  void updateBusy();

  std::mutex mutex_;  // guards everything below but address_
  sockaddr_in address_{};
  std::string secret_;
  std::chrono::milliseconds connectTimeout_;
  size_t maxUnexpected_;
  UniqueFd listener_;
  UniqueFd epoll_;
  // By rank; this rank's has no socket (sendToSelf), ranks not reached have none.
  std::vector<std::unique_ptr<Connection>> connections_;
  tcp::PayloadPool payloads_{kEagerBytes};  // the buffers of early messages
  RecordPool<Receive> receives_;
  RecordPool<Arrival> arrivals_;
  size_t queuedSends_ = 0;
  size_t live_ = 0;                    // connections to peers not dead
  Clock::time_point nextQuietRead_{};  // when progress() next reads every connection
  int self_ = -1;
  std::atomic<bool> busy_{false};
};

TcpTransport::TcpTransport(const Options& options)
    : secret_(options.secret),
      connectTimeout_(options.connectTimeout.count() > 0 ? options.connectTimeout : kConnectTimeout),
      maxUnexpected_(options.maxUnexpectedBytes > 0 ? options.maxUnexpectedBytes : kDefaultUnexpectedBytes) {
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
  epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) fail(COMM_ERR_TRANSPORT, "tcp: epoll_create1: {}", errnoText(errno));
}

void TcpTransport::connect(int selfRank, const std::vector<PeerInfo>& peers) {
  std::lock_guard lock(mutex_);
  connections_.resize(peers.size());
  // Messages to itself never touch a socket (send() hands them over).
  connections_[selfRank] = std::make_unique<Connection>();
  connections_[selfRank]->peer = selfRank;
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
    adopt(rank, std::move(fd));
  }
  if (awaited > 0) acceptPeers(awaited, deadline);
  listener_.reset();
}

void TcpTransport::acceptPeers(int awaited, Deadline deadline) {
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
      if (fds[i + 1].revents != 0 && !advance(newcomers[i], awaited)) newcomers.erase(newcomers.begin() + i);
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
      if (!advance(newcomer, awaited)) newcomers.pop_back();
    }
    if (awaited > 0 && deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "tcp: {} higher rank(s) did not connect within {} ms", awaited, connectTimeout_.count());
    }
  }
}

bool TcpTransport::advance(Newcomer& newcomer, int& awaited) {
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
        if (rank <= static_cast<uint64_t>(self_) || rank >= connections_.size() || connections_[rank]) {
          return turnAway(fmt::format("it proved the job's secret but says it is rank {}, which is not awaited", rank));
        }
        adopt(static_cast<int>(rank), std::move(newcomer.fd));
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

void TcpTransport::adopt(int peer, UniqueFd fd) {
  setNoDelay(fd.get());
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u32 = static_cast<uint32_t>(peer);
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &event) != 0) {
    fail(COMM_ERR_TRANSPORT, "tcp: epoll_ctl for rank {}: {}", peer, errnoText(errno));
  }
  auto c = std::make_unique<Connection>();
  c->peer = peer;
  c->fd = std::move(fd);
  connections_[peer] = std::move(c);
  ++live_;
}

Connection& TcpTransport::connection(int peer) {
  if (peer < 0 || static_cast<size_t>(peer) >= connections_.size() || !connections_[peer]) {
    fail(COMM_ERR_INVALID_ARGUMENT, "tcp: no connection to rank {}", peer);
  }
  return *connections_[peer];
}

void TcpTransport::send(int peer, uint64_t tag, const void* data, size_t size, Request& request) {
  std::lock_guard lock(mutex_);
  request.restart();
  Connection& c = connection(peer);
  if (c.dead()) return complete(request, c.deadStatus, c.deadWhy);
  if (peer == self_) return sendToSelf(c, tag, static_cast<const char*>(data), size, request);
  if (size <= kEagerBytes) {
    queue(c, {tag, size, Kind::kEager, 0, 0, 0}, static_cast<const char*>(data), &request);
    return;
  }
  const uint32_t id = c.nextSendId++;
  c.announced[id] = {static_cast<const char*>(data), size, &request};
  queue(c, {tag, size, Kind::kRequestToSend, id, 0, 0}, nullptr, nullptr);
}

void TcpTransport::sendToSelf(Connection& c, uint64_t tag, const char* data, size_t size, Request& request) {
  if (std::optional<Destination> receive = takeReceive(c, tag)) {
    fill(*receive, self_, tag, data, size);
  } else {
    Arrival* message = newArrival(tag, size);
    message->data = payloads_.take(size);
    if (size > 0) std::memcpy(message->data.get(), data, size);
    message->complete = true;
    // A rank's messages to itself are its own to bound: counted, never refused.
    c.matching.hold(message);
  }
  complete(request, COMM_OK);
}

void TcpTransport::queue(Connection& c, const Header& header, const char* data, Request* request) {
  c.sends.push_back({header, data, request});
  ++queuedSends_;
  // The next progress() writes it, with whatever else was posted meanwhile
  // (the caller's wait comes straight after posting).
  busy_.store(true, std::memory_order_relaxed);
}

void TcpTransport::recv(int peer, uint64_t tag, void* data, size_t size, Request& request) {
  std::lock_guard lock(mutex_);
  Connection& c = connection(peer);
  request.restart();
  const Destination receive{tag, static_cast<char*>(data), size, &request};
  if (Arrival* message = c.matching.findArrival(tag, [](const Arrival& a) { return a.claim.request == nullptr; })) {
    if (message->rendezvous) {
      clearToSend(c, tag, message->size, message->sendId, receive);
      forget(c, *message);
    } else if (message->complete) {
      deliver(c, *message, receive);
    } else {
      message->claim = receive;
    }
    return;
  }
  if (c.dead()) return complete(request, c.deadStatus, c.deadWhy);
  Receive* posted = receives_.acquire();
  *posted = Receive{receive};
  c.matching.post(posted);
}

void TcpTransport::cancel(Request& request) {
  std::lock_guard lock(mutex_);
  if (request.done.load(std::memory_order_acquire)) return;
  for (auto& owned : connections_) {
    if (!owned) continue;
    Connection& c = *owned;
    if (Receive* posted = c.matching.receiveOf(request)) {
      c.matching.unpost(posted);
      receives_.release(posted);
      return complete(request, COMM_ERR_ABORTED, "cancelled");
    }
    for (auto& [id, cleared] : c.cleared) {
      if (cleared.request == &request) {
        // Its payload is on its way: read it, drop it.
        cleared = {cleared.tag, nullptr, cleared.size, nullptr};
        return complete(request, COMM_ERR_ABORTED, "cancelled");
      }
    }
    if (c.incoming.request == &request) {
      // The payload is on its way: read it, drop it.
      c.incoming.request = nullptr;
      c.incoming.destination = nullptr;
      return complete(request, COMM_ERR_ABORTED, "cancelled");
    }
    if (Arrival* message = c.matching.arrivalWhere([&](const Arrival& a) { return a.claim.request == &request; })) {
      message->claim = {};
      return complete(request, COMM_ERR_ABORTED, "cancelled");
    }
    if (cancelSend(c, request)) return;
  }
}

// The peer's stream must stay whole and its receive must end, so a send is
// never just dropped: a message already (or soon) on the wire goes from a
// copy, and one whose payload waits for a go-ahead is withdrawn.
bool TcpTransport::cancelSend(Connection& c, Request& request) {
  for (QueuedSend& s : c.sends) {
    if (s.request != &request) continue;
    s.request = nullptr;
    const size_t payload = payloadBytes(s.header);
    const size_t payloadSent = s.sent > sizeof(Header) ? s.sent - sizeof(Header) : 0;
    if (s.header.kind == Kind::kPayload && s.sent == 0) {
      s.header = {s.header.tag, 0, Kind::kWithdrawn, s.header.id, 0, 0};
      s.data = nullptr;
    } else if (payload > payloadSent) {
      // Eager messages are small; a payload is copied only from where the
      // wire stopped (the pages before it are never touched).
      s.copy = std::make_unique_for_overwrite<char[]>(payload);
      std::memcpy(s.copy.get() + payloadSent, s.data + payloadSent, payload - payloadSent);
      s.data = s.copy.get();
    }
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  for (auto it = c.announced.begin(); it != c.announced.end(); ++it) {
    if (it->second.request != &request) continue;
    c.withdrawn.insert(it->first);
    c.announced.erase(it);
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  return false;
}

bool TcpTransport::progress() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // another thread is at it
  bool completed = false;
  const auto now = Clock::now();
  const bool everyone = now >= nextQuietRead_;
  if (everyone) nextQuietRead_ = now + kQuietReadInterval;
  auto toRead = [everyone](const std::unique_ptr<Connection>& c) {
    return c && c->fd.valid() && (everyone || awaited(*c));
  };
  if (live_ <= kDirectReadPeers) {
    for (auto& c : connections_) {
      if (toRead(c)) completed = readFrom(*c) || completed;
    }
  } else if (std::any_of(connections_.begin(), connections_.end(), toRead)) {
    epoll_event events[32];
    const int ready = epoll_wait(epoll_.get(), events, 32, 0);
    for (int i = 0; i < ready; ++i) {
      Connection& c = *connections_[events[i].data.u32];
      if (!c.dead()) completed = readFrom(c) || completed;
    }
  }
  if (queuedSends_ > 0) {
    for (auto& c : connections_) {
      if (c && !c->sends.empty()) completed = writeTo(*c) || completed;
    }
  }
  updateBusy();
  return completed;
}

bool TcpTransport::waitReady(std::chrono::microseconds limit) {
  // The connections a wait depends on: those it reads from and those whose
  // queued messages wait for room in the socket. The others are read every
  // kQuietReadInterval anyway.
  thread_local std::vector<pollfd> watched;
  watched.clear();
  {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;  // another thread is moving the bytes
    for (const auto& c : connections_) {
      if (!c || !c->fd.valid()) continue;
      const short events = static_cast<short>((awaited(*c) ? POLLIN : 0) | (c->sends.empty() ? 0 : POLLOUT));
      if (events != 0) watched.push_back({c->fd.get(), events, 0});
    }
  }
  if (watched.empty()) return false;
  // A descriptor closed meanwhile by another thread reports POLLNVAL: the
  // wait just ends early.
  const timespec timeout{static_cast<time_t>(limit.count() / 1'000'000),
                         static_cast<long>(limit.count() % 1'000'000) * 1000};
  ppoll(watched.data(), watched.size(), &timeout, nullptr);
  return true;
}

bool TcpTransport::writeTo(Connection& c) {
  bool completed = false;
  while (!c.sends.empty()) {
    // Every queued message in one sendmsg: a collective's signature and its
    // first data leave in one system call and usually arrive in one read.
    iovec parts[2 * kSendsPerCall];
    int count = 0;
    for (size_t i = 0; i < c.sends.size() && i < kSendsPerCall; ++i) {
      QueuedSend& s = c.sends[i];
      if (s.sent < sizeof(Header)) {
        parts[count++] = {reinterpret_cast<char*>(&s.header) + s.sent, sizeof(Header) - s.sent};
      }
      const size_t payloadSent = s.sent > sizeof(Header) ? s.sent - sizeof(Header) : 0;
      if (payloadBytes(s.header) > payloadSent) {
        parts[count++] = {const_cast<char*>(s.data) + payloadSent, payloadBytes(s.header) - payloadSent};
      }
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = count;
    const ssize_t wrote = sendmsg(c.fd.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      markDead(c, fmt::format("sending to rank {} failed: {}", c.peer, errnoText(errno)));
      return true;
    }
    size_t left = static_cast<size_t>(wrote);
    while (left > 0) {
      QueuedSend& s = c.sends.front();
      const size_t total = sizeof(Header) + payloadBytes(s.header);
      const size_t taken = std::min(left, total - s.sent);
      s.sent += taken;
      left -= taken;
      if (s.sent < total) break;
      if (s.request != nullptr) {
        complete(*s.request, COMM_OK);
        completed = true;
      }
      c.sends.pop_front();
      --queuedSends_;
    }
  }
  return completed;
}

bool TcpTransport::readFrom(Connection& c) {
  bool completed = false;
  bool drained = false;
  for (;;) {
    // What the inbox holds first: the rest of a payload, then headers.
    while (c.inStart < c.inEnd) {
      Incoming& in = c.incoming;
      if (in.active) {
        const size_t n = std::min(c.inEnd - c.inStart, in.remaining());
        if (in.destination != nullptr) std::memcpy(in.destination + in.got, c.inbox.get() + c.inStart, n);
        c.inStart += n;
        in.got += n;
        if (in.remaining() == 0) completed = finishIncoming(c) || completed;
        continue;
      }
      if (c.inEnd - c.inStart < sizeof(Header)) break;
      const Header header = decodeHeader(std::string_view(c.inbox.get() + c.inStart, sizeof(Header)));
      c.inStart += sizeof header;
      completed = startMessage(c, header) || completed;
      if (c.dead()) return true;
    }
    if (drained) return completed;
    ssize_t got;
    Incoming& in = c.incoming;
    if (in.active && in.destination != nullptr && c.inStart == c.inEnd && in.remaining() >= kInboxBytes) {
      got = ::recv(c.fd.get(), in.destination + in.got, in.remaining(), MSG_DONTWAIT);
      if (got > 0) {
        in.got += static_cast<size_t>(got);
        if (in.remaining() == 0) completed = finishIncoming(c) || completed;
        continue;
      }
    } else {
      // Keep a partial header, move it to the front.
      if (c.inStart > 0) {
        std::memmove(c.inbox.get(), c.inbox.get() + c.inStart, c.inEnd - c.inStart);
        c.inEnd -= c.inStart;
        c.inStart = 0;
      }
      const size_t room = kInboxBytes - c.inEnd;
      got = ::recv(c.fd.get(), c.inbox.get() + c.inEnd, room, MSG_DONTWAIT);
      if (got > 0) {
        c.inEnd += static_cast<size_t>(got);
        // A short read drained the socket: parse what came and stop without
        // the recv() that would only say EAGAIN (epoll reports the rest).
        drained = static_cast<size_t>(got) < room;
        continue;
      }
    }
    if (got == 0) {
      markDead(c, fmt::format("rank {} closed its connection (it exited or failed)", c.peer));
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return completed;
    markDead(c, fmt::format("receiving from rank {} failed: {}", c.peer, errnoText(errno)));
    return true;
  }
}

bool TcpTransport::startMessage(Connection& c, const Header& header) {
  if (std::string problem = checkHeader(header); !problem.empty()) {
    markDead(c, fmt::format("rank {} sent {}", c.peer, problem), COMM_ERR_TRANSPORT);
    return true;
  }
  switch (header.kind) {
    case Kind::kEager: break;
    case Kind::kRequestToSend: {
      if (std::optional<Destination> receive = takeReceive(c, header.tag)) {
        return clearToSend(c, header.tag, header.size, header.id, *receive);
      }
      if (!admit(c, Matching::cost(header.size, true))) return true;
      Arrival* message = newArrival(header.tag, header.size);
      message->complete = true;
      message->rendezvous = true;
      message->sendId = header.id;
      c.matching.hold(message);
      return false;
    }
    case Kind::kClearToSend: {
      if (c.withdrawn.erase(header.id) != 0) {
        queue(c, {header.tag, 0, Kind::kWithdrawn, header.answer, 0, 0}, nullptr, nullptr);
        return false;
      }
      auto it = c.announced.find(header.id);
      if (it == c.announced.end()) {
        markDead(c, fmt::format("rank {} cleared message {}, which this rank never announced", c.peer, header.id),
                 COMM_ERR_TRANSPORT);
        return true;
      }
      queue(c, {header.tag, it->second.size, Kind::kPayload, header.answer, 0, 0}, it->second.data, it->second.request);
      c.announced.erase(it);
      return false;
    }
    case Kind::kGoodbye:
      markDead(c, fmt::format("rank {} has shut down its transport (comm_destroy)", c.peer), COMM_ERR_REMOTE, true);
      return true;
    case Kind::kWithdrawn: {
      auto it = c.cleared.find(header.id);
      if (it == c.cleared.end()) {
        markDead(c, fmt::format("rank {} withdrew receive {}, which this rank did not clear", c.peer, header.id),
                 COMM_ERR_TRANSPORT);
        return true;
      }
      Request* request = it->second.request;
      const size_t size = it->second.size;
      c.cleared.erase(it);
      if (request == nullptr) return false;  // cancelled here too
      complete(*request, COMM_ERR_REMOTE,
               fmt::format("tcp: rank {} withdrew its message with tag {:#x} ({} bytes): its side of the operation "
                           "failed first",
                           c.peer, header.tag, size));
      return true;
    }
    case Kind::kPayload: {
      auto it = c.cleared.find(header.id);
      if (it == c.cleared.end() || it->second.size != header.size) {
        markDead(c,
                 fmt::format("rank {} sent {} bytes for receive {}, which this rank did not clear for that size",
                             c.peer, header.size, header.id),
                 COMM_ERR_TRANSPORT);
        return true;
      }
      c.incoming = {true, it->second.data, header.size, 0, it->second.request, nullptr};
      c.cleared.erase(it);
      return header.size == 0 && finishIncoming(c);
    }
  }
  bool completed = false;
  if (std::optional<Destination> receive = takeReceive(c, header.tag)) {
    if (receive->size == header.size) {
      c.incoming = {true, receive->data, header.size, 0, receive->request, nullptr};
    } else {
      mismatched(*receive, c.peer, header.tag, header.size);
      completed = true;
      c.incoming = {true, nullptr, header.size, 0, nullptr, nullptr};
    }
  } else {
    // checkHeader() bounded the size by kEagerBytes; this bounds how many.
    if (!admit(c, Matching::cost(header.size, false))) return true;
    Arrival* message = newArrival(header.tag, header.size);
    message->data = payloads_.take(header.size);
    c.matching.hold(message);
    c.incoming = {true, message->data.get(), header.size, 0, nullptr, message};
  }
  if (header.size == 0) completed = finishIncoming(c) || completed;
  return completed;
}

bool TcpTransport::finishIncoming(Connection& c) {
  const Incoming in = c.incoming;
  c.incoming = {};
  if (in.request != nullptr) {
    in.request->bytes = in.size;
    complete(*in.request, COMM_OK);
    return true;
  }
  if (in.unexpected == nullptr) return false;  // dropped
  in.unexpected->complete = true;
  return in.unexpected->claim.request != nullptr && deliver(c, *in.unexpected, in.unexpected->claim);
}

bool TcpTransport::clearToSend(Connection& c, uint64_t tag, size_t size, uint32_t sendId, const Destination& receive) {
  const uint32_t id = c.nextRecvId++;
  const bool fits = receive.size == size;
  c.cleared[id] = fits ? receive : Destination{tag, nullptr, size, nullptr};
  queue(c, {tag, 0, Kind::kClearToSend, sendId, id, 0}, nullptr, nullptr);
  if (fits) return false;
  mismatched(receive, c.peer, tag, size);
  return true;
}

bool TcpTransport::deliver(Connection& c, Arrival& message, const Destination& receive) {
  fill(receive, c.peer, message.tag, message.data.get(), message.size);
  forget(c, message);
  return true;
}

std::optional<Destination> TcpTransport::takeReceive(Connection& c, uint64_t tag) {
  Receive* posted = c.matching.takeReceive(tag);
  if (posted == nullptr) return std::nullopt;
  const Destination receive = *posted;
  receives_.release(posted);
  return receive;
}

Arrival* TcpTransport::newArrival(uint64_t tag, size_t size) {
  Arrival* message = arrivals_.acquire();
  *message = Arrival{};
  message->tag = tag;
  message->size = size;
  return message;
}

void TcpTransport::forget(Connection& c, Arrival& message) {
  c.matching.forget(&message);
  if (message.data) payloads_.giveBack(std::move(message.data), message.size);
  arrivals_.release(&message);
}

// Only a connection with nothing queued says goodbye: a message still on its
// way would otherwise be cut off, and the peer should hear of that loudly.
// The header fits any empty socket buffer; if it does not go, the peer sees
// a plain close, as after a crash.
TcpTransport::~TcpTransport() {
  std::lock_guard lock(mutex_);
  const Header goodbye{0, 0, Kind::kGoodbye, 0, 0, 0};
  for (const std::unique_ptr<Connection>& c : connections_) {
    if (c == nullptr || c->dead() || !c->fd.valid() || !c->sends.empty()) continue;
    [[maybe_unused]] ssize_t sent = ::send(c->fd.get(), &goodbye, sizeof goodbye, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

bool TcpTransport::admit(Connection& c, size_t cost) {
  if (c.matching.admits(cost, maxUnexpected_)) return true;
  markDead(c,
           fmt::format("rank {} sent more messages before their receives than this rank holds for one peer ({} bytes, "
                       "COMM_TCP_UNEXPECTED_BYTES)",
                       c.peer, maxUnexpected_),
           COMM_ERR_TRANSPORT);
  return false;
}

void TcpTransport::markDead(Connection& c, std::string why, comm_status_t status, bool quiet) {
  if (c.dead()) return;
  if (quiet) {
    log::debug("tcp: {}", why);
  } else {
    log::warn("tcp: {}", why);
  }
  c.deadWhy = std::move(why);
  c.deadStatus = status;
  --live_;
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  c.fd.reset();
  for (QueuedSend& s : c.sends) {
    if (s.request != nullptr) complete(*s.request, c.deadStatus, c.deadWhy);
  }
  for (auto& [id, send] : c.announced) complete(*send.request, c.deadStatus, c.deadWhy);
  c.announced.clear();
  c.withdrawn.clear();
  for (auto& [id, receive] : c.cleared) {
    if (receive.request != nullptr) complete(*receive.request, c.deadStatus, c.deadWhy);
  }
  c.cleared.clear();
  queuedSends_ -= c.sends.size();
  c.sends.clear();
  c.matching.takeEveryReceive([&](Receive& p) {
    complete(*p.request, c.deadStatus, c.deadWhy);
    receives_.release(&p);
  });
  if (c.incoming.request != nullptr) complete(*c.incoming.request, c.deadStatus, c.deadWhy);
  c.incoming = {};
  // Messages that arrived whole can still be received; the rest never will.
  c.matching.forgetIf([](const Arrival& m) { return !m.complete || m.rendezvous; },
                      [&](Arrival& m) {
                        if (m.claim.request != nullptr) complete(*m.claim.request, c.deadStatus, c.deadWhy);
                        if (m.data) payloads_.giveBack(std::move(m.data), m.size);
                        arrivals_.release(&m);
                      });
}

void TcpTransport::updateBusy() {
  bool moving = queuedSends_ > 0;
  for (size_t i = 0; i < connections_.size() && !moving; ++i) {
    const Connection* c = connections_[i].get();
    moving = c != nullptr && (c->incoming.active || !c->announced.empty() || !c->cleared.empty());
  }
  busy_.store(moving, std::memory_order_relaxed);
}

}  // namespace

std::unique_ptr<Transport> createTcpTransport(const Options& options) {
  return std::make_unique<TcpTransport>(options);
}

}  // namespace comm::transport
