#include "common/handshake.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <utility>

#include "common/error.h"
#include "common/hmac.h"
#include "common/socket.h"

namespace comm {
namespace {

// Says what a peer that is not comm at all (a port scanner, a web server at
// the wrong port) is talking to.
constexpr std::string_view kMagic = "commauth";
static_assert(kMagic.size() == Handshake::kMagicBytes);

void appendLittle(std::string& bytes, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t readLittle(std::string_view bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  return value;
}

}  // namespace

Handshake::Handshake(std::string_view secret, std::string_view context, Step step, uint64_t claim)
    : secret_(secret), context_(context), step_(step), claim_(claim) {
  if (secret_.empty()) fail(COMM_ERR_INVALID_ARGUMENT, "{}: no job secret to prove", context_);
}

Handshake Handshake::accepting(std::string_view secret, std::string_view context) {
  Handshake handshake(secret, context, Step::kAwaitAnswer, 0);
  handshake.serverNonce_ = randomBytes(kNonceBytes);
  handshake.output_ = std::string(kMagic) + handshake.serverNonce_;
  return handshake;
}

Handshake Handshake::connecting(std::string_view secret, std::string_view context, uint64_t claim) {
  return Handshake(secret, context, Step::kAwaitChallenge, claim);
}

size_t Handshake::wanted() const {
  size_t whole = 0;
  switch (step_) {
    case Step::kAwaitChallenge: whole = kChallengeBytes; break;
    case Step::kAwaitAnswer: whole = kAnswerBytes; break;
    case Step::kAwaitConfirmation: whole = kConfirmationBytes; break;
    case Step::kOver: return 0;
  }
  return whole - input_.size();
}

void Handshake::feed(std::string_view bytes) {
  while (!bytes.empty() && wanted() > 0) {
    const size_t taken = std::min(bytes.size(), wanted());
    input_.append(bytes.substr(0, taken));
    bytes.remove_prefix(taken);
    if (wanted() == 0) step(std::exchange(input_, {}));
  }
}

std::string Handshake::proof(std::string_view side) const {
  std::string message = context_;
  message += '\0';
  message += side;
  message += serverNonce_;
  message += clientNonce_;
  appendLittle(message, claim_);
  return hmacSha256(secret_, message);
}

void Handshake::step(std::string_view message) {
  switch (step_) {
    case Step::kAwaitChallenge: {
      if (message.substr(0, kMagicBytes) != kMagic) {
        return refuse("it does not speak comm's handshake (is it comm at that address?)");
      }
      serverNonce_ = message.substr(kMagicBytes);
      clientNonce_ = randomBytes(kNonceBytes);
      output_ = clientNonce_;
      appendLittle(output_, claim_);
      output_ += proof("connecting");
      step_ = Step::kAwaitConfirmation;
      return;
    }
    case Step::kAwaitAnswer: {
      clientNonce_ = message.substr(0, kNonceBytes);
      claim_ = readLittle(message.substr(kNonceBytes, 8));
      if (!sameBytes(message.substr(kNonceBytes + 8), proof("connecting"))) {
        return refuse("it did not prove the job's secret");
      }
      output_ = proof("accepting");
      step_ = Step::kOver;
      state_ = State::kDone;
      return;
    }
    case Step::kAwaitConfirmation: {
      if (!sameBytes(message, proof("accepting"))) {
        return refuse("it did not prove the job's secret: it is not this job's");
      }
      step_ = Step::kOver;
      state_ = State::kDone;
      return;
    }
    case Step::kOver: return;
  }
}

void Handshake::refuse(std::string why) {
  step_ = Step::kOver;
  state_ = State::kRefused;
  refusal_ = std::move(why);
  output_.clear();
}

void runHandshake(int fd, Handshake& handshake, Deadline deadline, comm_status_t failure, std::string_view what) {
  std::string out;
  size_t sent = 0;
  auto wait = [&](short events) {
    for (;;) {
      pollfd entry{fd, events, 0};
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline.at() - Clock::now()).count();
      const int ready = poll(&entry, 1, static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX)));
      if (ready > 0) return;
      if (ready < 0 && errno != EINTR) fail(failure, "{}: poll failed: {}", what, errnoText(errno));
      if (deadline.expired()) fail(COMM_ERR_TIMEOUT, "{}: the peer did not complete the handshake in time", what);
    }
  };
  for (;;) {
    out += handshake.takeOutput();
    while (sent < out.size()) {
      const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait(POLLOUT);
      } else if (n < 0 && errno != EINTR) {
        fail(failure, "{}: the connection failed during the handshake ({})", what, errnoText(errno));
      }
    }
    if (handshake.state() == Handshake::State::kRefused) fail(failure, "{}: {}", what, handshake.refusal());
    if (handshake.state() == Handshake::State::kDone) return;
    char buffer[Handshake::kAnswerBytes];
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, handshake.wanted()), MSG_DONTWAIT);
    if (n > 0) {
      handshake.feed(std::string_view(buffer, static_cast<size_t>(n)));
    } else if (n == 0) {
      fail(failure, "{}: the peer closed the connection during the handshake (it refused this process's job secret)",
           what);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait(POLLIN);
    } else if (errno != EINTR) {
      fail(failure, "{}: the connection failed during the handshake ({})", what, errnoText(errno));
    }
  }
}

}  // namespace comm
