// comm's tcp transport (see tcp_transport.h): its connections made by
// connector.h, the messages on them moved by message_engine.h, and here the
// Transport those two make, the progress loop that reads and writes the
// sockets, and the waits on them. Every call runs under mutex_.
#include "transport/tcp/tcp_transport.h"

#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "common/deadline.h"
#include "common/unique_fd.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/message_engine.h"

namespace comm::transport {
namespace {

using tcp::Connection;

// Up to this many peers progress() tries a recv() on each it reads instead
// of asking epoll which are readable: one system call per peer when idle,
// and when a message is there, one fewer than epoll_wait plus the recv().
constexpr size_t kDirectReadPeers = 3;
// How often progress() reads connections that nothing of this rank waits
// for: their early messages, a dead peer's end of stream. Between those
// looks they wait in the kernel; reading them sooner would only move them
// to the arrivals, at one system call per connection and look, and where
// ranks share cores those calls take the time of the ranks with work.
constexpr auto kQuietReadInterval = std::chrono::microseconds(200);

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const Options& options)
      : connector_(options),
        messages_(options.tcp.maxUnexpectedBytes > 0 ? options.tcp.maxUnexpectedBytes : kDefaultUnexpectedBytes) {}
  ~TcpTransport() override {
    std::lock_guard lock(mutex_);
    messages_.sayGoodbye();
  }

  std::vector<uint8_t> localAddress() const override {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&connector_.address());
    return {bytes, bytes + sizeof(sockaddr_in)};
  }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override {
    std::lock_guard lock(mutex_);
    std::vector<UniqueFd> sockets;
    try {
      connector_.connect(selfRank, peers, sockets);
    } catch (...) {
      // The peers proven before the failure hear this rank's goodbye when
      // it is destroyed, not what looks like a crash.
      if (!sockets.empty()) messages_.open(selfRank, std::move(sockets));
      throw;
    }
    messages_.open(selfRank, std::move(sockets));
  }
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override {
    std::lock_guard lock(mutex_);
    messages_.send(peer, tag, static_cast<const char*>(data), size, request);
  }
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override {
    std::lock_guard lock(mutex_);
    messages_.recv(peer, tag, static_cast<char*>(data), size, request);
  }
  void cancel(Request& request) override {
    std::lock_guard lock(mutex_);
    messages_.cancel(request);
  }
  bool busy() const override { return messages_.busy(); }
  bool waitReady(std::chrono::microseconds limit) override;
  bool progress() override;
  std::string providerFor(int) const override { return kTcpProvider; }
  // A message is one stream on the peer's socket: a forwarder sees none of
  // it until all of it is in.
  bool wantsChunkedMessages(bool) const override { return true; }

 private:
  std::mutex mutex_;  // guards everything below but the connector's address
  tcp::Connector connector_;
  tcp::MessageEngine messages_;
  Clock::time_point nextQuietRead_{};  // when progress() next reads every connection
};

bool TcpTransport::progress() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // another thread is at it
  bool completed = false;
  const auto now = Clock::now();
  const bool everyone = now >= nextQuietRead_;
  if (everyone) nextQuietRead_ = now + kQuietReadInterval;
  auto toRead = [everyone](const std::unique_ptr<Connection>& c) {
    return c && c->fd.valid() && !c->heldBack && (everyone || c->awaited());
  };
  const auto& connections = messages_.connections();
  if (messages_.live() <= kDirectReadPeers) {
    for (const auto& c : connections) {
      if (toRead(c)) completed = messages_.readFrom(*c) || completed;
    }
  } else if (std::any_of(connections.begin(), connections.end(), toRead)) {
    epoll_event events[32];
    const int ready = epoll_wait(messages_.readiness(), events, 32, 0);
    for (int i = 0; i < ready; ++i) {
      Connection& c = *connections[events[i].data.u32];
      if (!c.dead() && !c.heldBack) completed = messages_.readFrom(c) || completed;
    }
  }
  if (messages_.queuedSends() > 0) {
    for (const auto& c : connections) {
      if (c && !c->sends.empty()) completed = messages_.writeTo(*c) || completed;
    }
  }
  messages_.updateBusy();
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
    for (const auto& c : messages_.connections()) {
      if (!c || !c->fd.valid()) continue;
      const short events =
          static_cast<short>((c->awaited() && !c->heldBack ? POLLIN : 0) | (c->sends.empty() ? 0 : POLLOUT));
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

}  // namespace

std::unique_ptr<Transport> createTcpTransport(const Options& options) {
  return std::make_unique<TcpTransport>(options);
}

}  // namespace comm::transport
