#include "transport/tcp/send_queue.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

namespace comm::transport::tcp {
namespace {

// The most queued messages one sendmsg gathers.
constexpr size_t kSendsPerCall = 16;

void complete(Request& request, comm_status_t status, const std::string& why) {
  request.fail(status, "{}", why);
  request.markDone();
}

}  // namespace

uint32_t SendQueue::announce(const char* data, size_t size, Request& request) {
  const uint32_t id = nextSendId_++;
  announced_[id] = {data, size, &request};
  return id;
}

bool SendQueue::clear(const Header& clearToSend) {
  if (withdrawn_.erase(clearToSend.id) != 0) {
    push({clearToSend.tag, 0, Kind::kWithdrawn, clearToSend.answer, 0, 0}, nullptr, nullptr);
    return true;
  }
  auto it = announced_.find(clearToSend.id);
  if (it == announced_.end()) return false;
  push({clearToSend.tag, it->second.size, Kind::kPayload, clearToSend.answer, 0, 0}, it->second.data,
       it->second.request);
  announced_.erase(it);
  return true;
}

SendQueue::Written SendQueue::write(int fd) {
  Written written;
  while (!sends_.empty()) {
    // Every queued message in one sendmsg: a collective's signature and its
    // first data leave in one system call and usually arrive in one read.
    iovec parts[2 * kSendsPerCall];
    int count = 0;
    for (size_t i = 0; i < sends_.size() && i < kSendsPerCall; ++i) {
      QueuedSend& s = sends_[i];
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
    const ssize_t wrote = sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      written.error = errno;
      return written;
    }
    size_t left = static_cast<size_t>(wrote);
    while (left > 0) {
      QueuedSend& s = sends_.front();
      const size_t total = sizeof(Header) + payloadBytes(s.header);
      const size_t taken = std::min(left, total - s.sent);
      s.sent += taken;
      left -= taken;
      if (s.sent < total) break;
      if (s.request != nullptr) {
        s.request->markDone();
        written.completed = true;
      }
      sends_.pop_front();
      ++written.messages;
    }
  }
  return written;
}

// The peer's stream must stay whole and its receive must end, so a send is
// never just dropped: a message already (or soon) on the wire goes from a
// copy, and one whose payload waits for a go-ahead is withdrawn.
bool SendQueue::cancel(Request& request) {
  for (QueuedSend& s : sends_) {
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
  for (auto it = announced_.begin(); it != announced_.end(); ++it) {
    if (it->second.request != &request) continue;
    withdrawn_.insert(it->first);
    announced_.erase(it);
    complete(request, COMM_ERR_ABORTED, "cancelled");
    return true;
  }
  return false;
}

size_t SendQueue::fail(comm_status_t status, const std::string& why) {
  for (QueuedSend& s : sends_) {
    if (s.request != nullptr) complete(*s.request, status, why);
  }
  for (auto& [id, send] : announced_) complete(*send.request, status, why);
  announced_.clear();
  withdrawn_.clear();
  const size_t queued = sends_.size();
  sends_.clear();
  return queued;
}

}  // namespace comm::transport::tcp
