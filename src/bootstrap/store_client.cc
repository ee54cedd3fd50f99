// StoreClient: one TCP connection, one request in flight at a time (a mutex
// serialises callers). Every wait is a poll() bounded by the call's deadline;
// a get or wait blocks in the server, not in a client retry loop.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <mutex>
#include <thread>
#include <utility>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "common/error.h"
#include "common/handshake.h"
#include "common/log.h"
#include "common/socket.h"
#include "common/unique_fd.h"

namespace comm::bootstrap {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstRetryDelay{10};
constexpr milliseconds kMaxRetryDelay{200};
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kKeysNamedInErrors = 8;

// Rounded up, so that poll() never returns just before the deadline and
// turns the last millisecond into a busy loop.
milliseconds timeLeft(Deadline deadline) {
  return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(deadline.at() - Clock::now()));
}

int pollTimeout(Deadline deadline) { return static_cast<int>(std::min<int64_t>(timeLeft(deadline).count(), INT_MAX)); }

// Waits for `events` on `fd`; false when the deadline passed first.
bool awaitReady(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    int ready = poll(&entry, 1, pollTimeout(deadline));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) fail(COMM_ERR_BOOTSTRAP, "store client: poll failed: {}", errnoText(errno));
    if (deadline.expired()) return false;
  }
}

// One attempt at one address; an invalid fd (and `error` set) on failure.
UniqueFd tryConnect(const addrinfo& address, Deadline deadline, std::string& error) {
  UniqueFd fd(socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol));
  if (!fd.valid()) {
    error = errnoText(errno);
    return {};
  }
  if (connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      error = errnoText(errno);
      return {};
    }
    if (!awaitReady(fd.get(), POLLOUT, deadline)) {
      error = "connection attempt timed out";
      return {};
    }
    int status = 0;
    socklen_t length = sizeof(status);
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &status, &length);
    if (status != 0) {
      error = errnoText(status);
      return {};
    }
  }
  setNoDelay(fd.get());
  return fd;
}

UniqueFd connectWithRetry(const std::string& host, uint16_t port, Deadline deadline) {
  const std::string where = endpointName(host, port);
  const milliseconds budget = timeLeft(deadline);
  milliseconds delay = kFirstRetryDelay;
  std::string error = "no address";
  for (;;) {
    AddrInfoList addresses;
    int status = resolveTcp(host, port, false, addresses);
    if (status == 0) {
      for (addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
        if (UniqueFd fd = tryConnect(*address, deadline, error); fd.valid()) return fd;
      }
    } else if (status == EAI_AGAIN) {
      error = gai_strerror(status);
    } else {
      fail(COMM_ERR_BOOTSTRAP, "store client: cannot resolve {}: {}", where, gai_strerror(status));
    }
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "store client: no store answered at {} within {} ms (last attempt: {})", where,
           budget.count(), error);
    }
    // The server may simply not be up yet: retry soon, backing off a little.
    std::this_thread::sleep_for(std::min(delay, deadline.remaining()));
    delay = std::min(delay * 2, kMaxRetryDelay);
  }
}

std::string describeKeys(const std::vector<std::string>& keys) {
  std::string text;
  for (size_t i = 0; i < keys.size() && i < kKeysNamedInErrors; ++i) {
    text += fmt::format("{}'{}'", i == 0 ? "" : ", ", keys[i]);
  }
  if (keys.size() > kKeysNamedInErrors) text += fmt::format(" and {} more", keys.size() - kKeysNamedInErrors);
  return text;
}

}  // namespace

struct StoreClient::Impl {
  std::string where;
  UniqueFd fd;
  std::string in;      // received bytes not yet consumed as answers
  std::string broken;  // why the connection is unusable; empty while healthy
  uint64_t lastId = 0;
  std::mutex mutex;

  // A request frame for `op` carrying a fresh id.
  FrameWriter request(StoreOp op) { return std::move(FrameWriter().u8(uint8_t(op)).u64(++lastId)); }

  // Sends the request built by request() and returns the status of its
  // answer and the bytes after that status. `what` names the call in errors.
  std::pair<StoreStatus, std::string> exchange(const std::string& what, FrameWriter& frame, Deadline deadline) {
    const milliseconds budget = timeLeft(deadline);
    if (!broken.empty()) {
      fail(COMM_ERR_BOOTSTRAP, "store {} at {}: the connection is unusable since {}", what, where, broken);
    }
    auto timedOut = [&] {
      fail(COMM_ERR_TIMEOUT, "store {} at {} timed out after {} ms", what, where, budget.count());
    };
    auto lost = [&](std::string reason) {
      broken = reason;
      fail(COMM_ERR_BOOTSTRAP, "store {} at {}: {}", what, where, reason);
    };

    const std::string bytes = frame.finish();
    size_t sent = 0;
    // A server that refuses a request (over a limit) answers why and closes
    // the connection, possibly before the request is all sent: the answer
    // is then read before the failure is reported.
    std::string sendFailure;
    while (sent < bytes.size() && sendFailure.empty()) {
      ssize_t done = send(fd.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (done >= 0) {
        sent += done;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!awaitReady(fd.get(), POLLOUT, deadline)) {
          if (sent > 0) broken = fmt::format("{} timed out half-sent", what);
          timedOut();
        }
      } else if (errno != EINTR) {
        sendFailure = "the connection failed (" + errnoText(errno) + ")";
      }
    }

    for (;;) {
      std::optional<uint32_t> size;
      try {
        size = completeFrame(in);
      } catch (const Error& error) {
        lost(error.what());
      }
      if (size) {
        std::string body = in.substr(kFrameHeaderBytes, *size);
        in.erase(0, kFrameHeaderBytes + *size);
        FrameReader answer(body);
        // A different id answers an earlier call that gave up on its deadline.
        if (answer.u64() != lastId) continue;
        const auto status = static_cast<StoreStatus>(answer.u8());
        if (status == StoreStatus::kError) fail(COMM_ERR_BOOTSTRAP, "store {} at {}: {}", what, where, answer.bytes());
        return {status, body.substr(sizeof(uint64_t) + 1)};
      }
      const size_t used = in.size();
      in.resize(used + kReadChunk);
      ssize_t got = recv(fd.get(), in.data() + used, kReadChunk, 0);
      in.resize(used + (got > 0 ? got : 0));
      if (got == 0) lost(sendFailure.empty() ? "the server closed the connection" : sendFailure);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!awaitReady(fd.get(), POLLIN, deadline)) timedOut();
      } else if (got < 0 && errno != EINTR) {
        lost(sendFailure.empty() ? "the connection failed (" + errnoText(errno) + ")" : sendFailure);
      }
    }
  }
};

StoreClient::StoreClient(const std::string& host, uint16_t port, const std::string& secret, Deadline deadline)
    : impl_(std::make_unique<Impl>()) {
  impl_->where = endpointName(host, port);
  impl_->fd = connectWithRetry(host, port, deadline);
  Handshake handshake = Handshake::connecting(secret, kStoreContext, 0);
  runHandshake(impl_->fd.get(), handshake, deadline, COMM_ERR_BOOTSTRAP, "store client: the store at " + impl_->where);
  log::debug("store client: connected to {}", impl_->where);
}

StoreClient::~StoreClient() = default;

void StoreClient::set(const std::string& key, const std::string& value, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  impl_->exchange(fmt::format("set('{}')", key), impl_->request(StoreOp::kSet).bytes(key).bytes(value), deadline);
}

std::string StoreClient::setIfAbsent(const std::string& key, const std::string& value, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  auto [status, result] = impl_->exchange(fmt::format("setIfAbsent('{}')", key),
                                          impl_->request(StoreOp::kSetIfAbsent).bytes(key).bytes(value), deadline);
  return FrameReader(result).bytes();
}

std::string StoreClient::get(const std::string& key, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  auto [status, result] =
      impl_->exchange(fmt::format("get('{}')", key), impl_->request(StoreOp::kGet).bytes(key), deadline);
  return FrameReader(result).bytes();
}

void StoreClient::wait(const std::vector<std::string>& keys, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  FrameWriter request = impl_->request(StoreOp::kWait);
  request.u32(static_cast<uint32_t>(keys.size()));
  for (const std::string& key : keys) request.bytes(key);
  impl_->exchange(fmt::format("wait({})", describeKeys(keys)), request, deadline);
}

int64_t StoreClient::add(const std::string& key, int64_t delta, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  auto [status, result] = impl_->exchange(fmt::format("add('{}', {})", key, delta),
                                          impl_->request(StoreOp::kAdd).bytes(key).i64(delta), deadline);
  return FrameReader(result).i64();
}

std::optional<std::string> StoreClient::check(const std::string& key, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  auto [status, result] =
      impl_->exchange(fmt::format("check('{}')", key), impl_->request(StoreOp::kCheck).bytes(key), deadline);
  if (status == StoreStatus::kMissing) return std::nullopt;
  return FrameReader(result).bytes();
}

void StoreClient::erasePrefix(const std::string& prefix, Deadline deadline) {
  std::lock_guard lock(impl_->mutex);
  impl_->exchange(fmt::format("erase('{}*')", prefix), impl_->request(StoreOp::kErasePrefix).bytes(prefix), deadline);
}

}  // namespace comm::bootstrap
