// The proof of the job's secret that opens every connection between the
// processes of a job (to the rendezvous store, between ranks over comm's
// tcp transport): a challenge-response with HMAC-SHA256, so the secret
// itself never crosses the wire and an answer recorded once is worthless
// later. Each side proves it knows the secret; the connecting side also
// makes a claim about itself (tcp: its rank) that the proof covers.
//
//   accepting -> connecting   magic:8 nonce:32
//   connecting -> accepting   nonce:32 claim:u64 proof:32
//   accepting -> connecting   proof:32
//
// proof = HMAC(secret, context | side | both nonces | claim): the context
// ("store", "tcp") keeps a proof for one kind of connection from opening
// another, the side keeps a proof from being reflected back.
//
// Handshake is the state machine without the I/O, so that a server that
// serves many connections from one poll() loop can drive one per
// connection and never wait for a silent peer; runHandshake drives one
// over a socket for a caller that may block.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "comm.h"
#include "common/deadline.h"

namespace comm {

class Handshake {
 public:
  enum class State { kRunning, kDone, kRefused };

  // The side that accepted the connection: it speaks first.
  static Handshake accepting(std::string_view secret, std::string_view context);
  // The side that connected, asserting `claim`.
  static Handshake connecting(std::string_view secret, std::string_view context, uint64_t claim);

  // The bytes to send now (empty when there are none); the caller sends them
  // before it waits for more.
  std::string takeOutput() { return std::move(output_); }
  // How many bytes the handshake needs before it can go on; 0 once it is
  // over. No more than this may be fed: what follows belongs to the caller.
  size_t wanted() const;
  // Takes up to wanted() bytes.
  void feed(std::string_view bytes);

  State state() const { return state_; }
  // Why the peer was refused, once state() is kRefused.
  const std::string& refusal() const { return refusal_; }
  // The connecting side's claim, proven once state() is kDone.
  uint64_t claim() const { return claim_; }

  static constexpr size_t kMagicBytes = 8;
  static constexpr size_t kNonceBytes = 32;
  static constexpr size_t kChallengeBytes = kMagicBytes + kNonceBytes;
  static constexpr size_t kAnswerBytes = kNonceBytes + sizeof(uint64_t) + 32;
  static constexpr size_t kConfirmationBytes = 32;

 private:
  enum class Step { kAwaitChallenge, kAwaitAnswer, kAwaitConfirmation, kOver };

  Handshake(std::string_view secret, std::string_view context, Step step, uint64_t claim);
  std::string proof(std::string_view side) const;
  void step(std::string_view message);
  void refuse(std::string why);

  std::string secret_;
  std::string context_;
  Step step_;
  State state_ = State::kRunning;
  std::string serverNonce_;
  std::string clientNonce_;
  uint64_t claim_;
  std::string input_;
  std::string output_;
  std::string refusal_;
};

// Runs `handshake` over the socket `fd` (blocking or not) until it is over
// or `deadline` passes. Throws comm::Error: `failure` when the peer is
// refused or closes the connection, COMM_ERR_TIMEOUT at the deadline; the
// message starts with `what` (e.g. "store client: 127.0.0.1:4000").
void runHandshake(int fd, Handshake& handshake, Deadline deadline, comm_status_t failure, std::string_view what);

}  // namespace comm
