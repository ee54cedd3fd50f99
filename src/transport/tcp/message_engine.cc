#include "transport/tcp/message_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "common/error.h"
#include "common/log.h"
#include "common/socket.h"
#include "transport/tcp/tcp_transport.h"

namespace comm::transport::tcp {
namespace {

void complete(Request& request, comm_status_t status, std::string_view error = {}) {
  if (status != COMM_OK) request.fail(status, "{}", error);
  request.markDone();
}

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

}  // namespace

MessageEngine::MessageEngine(size_t maxUnexpected) : maxUnexpected_(maxUnexpected) {
  epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) fail(COMM_ERR_TRANSPORT, "tcp: epoll_create1: {}", errnoText(errno));
}

void MessageEngine::open(int self, std::vector<UniqueFd> sockets) {
  connections_.resize(sockets.size());
  self_ = self;
  // Messages to itself never touch a socket (send() hands them over).
  connections_[self] = std::make_unique<Connection>();
  connections_[self]->peer = self;
  for (size_t rank = 0; rank < sockets.size(); ++rank) {
    if (sockets[rank].valid()) adopt(static_cast<int>(rank), std::move(sockets[rank]));
  }
}

void MessageEngine::adopt(int peer, UniqueFd fd) {
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

Connection& MessageEngine::connection(int peer) {
  if (peer < 0 || static_cast<size_t>(peer) >= connections_.size() || !connections_[peer]) {
    fail(COMM_ERR_INVALID_ARGUMENT, "tcp: no connection to rank {}", peer);
  }
  return *connections_[peer];
}

void MessageEngine::send(int peer, uint64_t tag, const char* data, size_t size, Request& request) {
  request.restart();
  Connection& c = connection(peer);
  if (c.dead()) return complete(request, c.deadStatus, c.deadWhy);
  if (peer == self_) return sendToSelf(c, tag, data, size, request);
  if (size <= kEagerBytes) return queue(c, {tag, size, Kind::kEager, 0, 0, 0}, data, &request);
  const uint32_t id = c.sends.announce(data, size, request);
  queue(c, {tag, size, Kind::kRequestToSend, id, 0, 0}, nullptr, nullptr);
}

void MessageEngine::sendToSelf(Connection& c, uint64_t tag, const char* data, size_t size, Request& request) {
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

void MessageEngine::queue(Connection& c, const Header& header, const char* data, Request* request) {
  c.sends.push(header, data, request);
  queued();
}

void MessageEngine::queued() {
  ++queuedSends_;
  // The next progress() writes it, with whatever else was posted meanwhile
  // (the caller's wait comes straight after posting).
  busy_.store(true, std::memory_order_relaxed);
}

void MessageEngine::recv(int peer, uint64_t tag, char* data, size_t size, Request& request) {
  Connection& c = connection(peer);
  request.restart();
  const Destination receive{tag, data, size, &request};
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
  // It may be for the message held back in the socket.
  c.heldBack = false;
}

void MessageEngine::cancel(Request& request) {
  if (request.done.load(std::memory_order_acquire)) return;
  for (auto& owned : connections_) {
    if (owned && (cancelReceive(*owned, request) || owned->sends.cancel(request))) return;
  }
}

bool MessageEngine::cancelReceive(Connection& c, Request& request) {
  if (Receive* posted = c.matching.receiveOf(request)) {
    c.matching.unpost(posted);
    receives_.release(posted);
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  for (auto& [id, cleared] : c.cleared) {
    if (cleared.request == &request) {
      // Its payload is on its way: read it, drop it.
      cleared = {cleared.tag, nullptr, cleared.size, nullptr};
      complete(request, COMM_ERR_ABORTED, "cancelled");
      return true;
    }
  }
  if (c.incoming.request == &request) {
    // The payload is on its way: read it, drop it.
    c.incoming.request = nullptr;
    c.incoming.destination = nullptr;
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  if (Arrival* message = c.matching.arrivalWhere([&](const Arrival& a) { return a.claim.request == &request; })) {
    message->claim = {};
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  return false;
}

bool MessageEngine::writeTo(Connection& c) {
  const SendQueue::Written written = c.sends.write(c.fd.get());
  queuedSends_ -= written.messages;
  if (written.error == 0) return written.completed;
  markDead(c, fmt::format("sending to rank {} failed: {}", c.peer, errnoText(written.error)));
  return true;
}

bool MessageEngine::readFrom(Connection& c) {
  if (c.heldBack) return false;
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
      if (overBudget(c, header)) {
        c.heldBack = true;
        return completed;
      }
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

bool MessageEngine::startMessage(Connection& c, const Header& header) {
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
      Arrival* message = newArrival(header.tag, header.size);
      message->complete = true;
      message->rendezvous = true;
      message->sendId = header.id;
      c.matching.hold(message);
      return false;
    }
    case Kind::kClearToSend:
      if (!c.sends.clear(header)) {
        markDead(c, fmt::format("rank {} cleared message {}, which this rank never announced", c.peer, header.id),
                 COMM_ERR_TRANSPORT);
        return true;
      }
      queued();
      return false;
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
    // checkHeader() bounded the size by kEagerBytes, overBudget() how many.
    Arrival* message = newArrival(header.tag, header.size);
    message->data = payloads_.take(header.size);
    c.matching.hold(message);
    c.incoming = {true, message->data.get(), header.size, 0, nullptr, message};
  }
  if (header.size == 0) completed = finishIncoming(c) || completed;
  return completed;
}

bool MessageEngine::finishIncoming(Connection& c) {
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

bool MessageEngine::clearToSend(Connection& c, uint64_t tag, size_t size, uint32_t sendId, const Destination& receive) {
  const uint32_t id = c.nextRecvId++;
  const bool fits = receive.size == size;
  c.cleared[id] = fits ? receive : Destination{tag, nullptr, size, nullptr};
  queue(c, {tag, 0, Kind::kClearToSend, sendId, id, 0}, nullptr, nullptr);
  if (fits) return false;
  mismatched(receive, c.peer, tag, size);
  return true;
}

bool MessageEngine::deliver(Connection& c, Arrival& message, const Destination& receive) {
  fill(receive, c.peer, message.tag, message.data.get(), message.size);
  forget(c, message);
  return true;
}

std::optional<Destination> MessageEngine::takeReceive(Connection& c, uint64_t tag) {
  Receive* posted = c.matching.takeReceive(tag);
  if (posted == nullptr) return std::nullopt;
  const Destination receive = *posted;
  receives_.release(posted);
  return receive;
}

Arrival* MessageEngine::newArrival(uint64_t tag, size_t size) {
  Arrival* message = arrivals_.acquire();
  *message = Arrival{};
  message->tag = tag;
  message->size = size;
  return message;
}

void MessageEngine::forget(Connection& c, Arrival& message) {
  c.matching.forget(&message);
  c.heldBack = false;
  if (message.data) payloads_.giveBack(std::move(message.data), message.size);
  arrivals_.release(&message);
}

// Only a connection with nothing queued says goodbye: a message still on its
// way would otherwise be cut off, and the peer should hear of that loudly.
// The header fits any empty socket buffer; if it does not go, the peer sees
// a plain close, as after a crash.
void MessageEngine::sayGoodbye() {
  const Header goodbye{0, 0, Kind::kGoodbye, 0, 0, 0};
  for (const std::unique_ptr<Connection>& c : connections_) {
    if (c == nullptr || c->dead() || !c->fd.valid() || !c->sends.empty()) continue;
    [[maybe_unused]] ssize_t sent = ::send(c->fd.get(), &goodbye, sizeof goodbye, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

bool MessageEngine::overBudget(const Connection& c, const Header& header) const {
  if (header.kind != Kind::kEager && header.kind != Kind::kRequestToSend) return false;
  // The sum first: on every message it is all this costs. Past it, a
  // message alone is always taken, so that none waits for a budget smaller
  // than itself; one a receive waits for holds nothing; and a broken header
  // is startMessage()'s to report.
  if (c.matching.admits(Matching::cost(header.size, header.kind == Kind::kRequestToSend), maxUnexpected_)) return false;
  return c.matching.held() > 0 && !c.matching.hasReceiveFor(header.tag) && checkHeader(header).empty();
}

void MessageEngine::markDead(Connection& c, std::string why, comm_status_t status, bool quiet) {
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
  queuedSends_ -= c.sends.fail(c.deadStatus, c.deadWhy);
  for (auto& [id, receive] : c.cleared) {
    if (receive.request != nullptr) complete(*receive.request, c.deadStatus, c.deadWhy);
  }
  c.cleared.clear();
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

void MessageEngine::updateBusy() {
  bool moving = queuedSends_ > 0;
  for (size_t i = 0; i < connections_.size() && !moving; ++i) {
    const Connection* c = connections_[i].get();
    moving = c != nullptr && c->moving();
  }
  busy_.store(moving, std::memory_order_relaxed);
}

}  // namespace comm::transport::tcp
