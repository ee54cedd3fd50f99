// The shared-memory transport's records: operations that outlive the call
// that started them and messages that arrived before their receive
// (arrivals, matching_engine.h). Intrusive lists hold them
// (intrusive_list.h) and pools keep them (record_pool.h), so that steady
// traffic never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/transport.h"

namespace comm::transport {

enum class ShmOpState : uint8_t {
  kQueued,     // send waiting for ring space (in the peer's backlog)
  kAnnounced,  // send whose request-to-send is out, waiting for the receiver's clear-to-send or finish
  kStreaming,  // send cleared to stream its chunks (in the peer's stream list)
  kPosted,     // receive waiting for its message (posted in the peer's matching engine)
  kCopying,    // receive reading its message by Cross-Memory Attach (in the copy list)
  kReceiving,  // receive taking streamed chunks (in the peer's receiving list)
  kDraining,   // cancelled receive whose remaining chunks are discarded
};

struct ShmOp {
  Request* request = nullptr;  // null once a cancelled receive only drains
  char* buffer = nullptr;
  size_t size = 0;
  uint64_t tag = 0;
  uint64_t remoteToken = 0;    // the peer's operation, for replies and chunks
  uint64_t remoteAddress = 0;  // the message in the sender's memory (Cross-Memory Attach)
  size_t done = 0;             // bytes moved
  size_t claimed = 0;          // bytes handed to copiers (Cross-Memory Attach)
  int copiers = 0;             // threads copying a piece with the lock released
  int failure = 0;             // errno of a failed copy
  bool cancelled = false;
  int peer = -1;
  ShmOpState state = ShmOpState::kQueued;
  ShmOp* prev = nullptr;
  ShmOp* next = nullptr;

  // Operations are named to peers by address: it stays valid while the peer
  // can still refer to it.
  uint64_t token() const { return reinterpret_cast<uint64_t>(this); }
  static ShmOp* fromToken(uint64_t token) { return reinterpret_cast<ShmOp*>(token); }
};

// A message that arrived before a receive for it was posted (an arrival).
struct ShmArrival {
  uint64_t tag = 0;
  size_t size = 0;
  bool rendezvous = false;  // a request-to-send: senderToken and address say where the bytes are
  uint64_t senderToken = 0;
  uint64_t address = 0;
  std::vector<char> data;  // an eager message's bytes; keeps its capacity across reuse
  ShmArrival* prev = nullptr;
  ShmArrival* next = nullptr;
};

}  // namespace comm::transport
