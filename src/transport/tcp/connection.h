// One peer's connection as comm's tcp transport keeps it once connector.h
// has made it: the socket, what this rank sends on it (send_queue.h), the
// receives and early messages matched on it (matching_engine.h), and the
// bytes being read. message_engine.h moves them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/unique_fd.h"
#include "transport/matching_engine.h"
#include "transport/tcp/send_queue.h"
#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

namespace comm::transport::tcp {

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
  UniqueFd fd;                                 // none for this rank's connection to itself
  std::string deadWhy;                         // non-empty once the connection is gone
  comm_status_t deadStatus = COMM_ERR_REMOTE;  // what requests to it fail with then
  SendQueue sends;
  Matching matching;                                  // receives posted, arrivals (Incoming points into them)
  std::unordered_map<uint32_t, Destination> cleared;  // receives told to come, by the receiver's number;
                                                      // data and request null: dropped on arrival
  uint32_t nextRecvId = 0;
  std::unique_ptr<char[]> inbox = std::make_unique_for_overwrite<char[]>(kInboxBytes);
  size_t inStart = 0;
  size_t inEnd = 0;
  Incoming incoming;
  // Its early messages fill the budget (COMM_TCP_UNEXPECTED_BYTES): what
  // follows stays in the socket, and the peer's sends wait in its queue,
  // until a receive is posted here or takes an arrival (back-pressure).
  bool heldBack = false;

  bool dead() const { return !deadWhy.empty(); }
  // Whether something this rank started waits for what comes on it: a
  // receive, a go-ahead for an announced or withdrawn send, the rest of a
  // payload.
  bool awaited() const {
    return matching.hasReceives() || sends.awaitsGoAhead() || !cleared.empty() || incoming.active;
  }
  // Whether a transfer on it is under way that moves only while somebody
  // polls: a payload coming in, a large message either way.
  bool moving() const { return incoming.active || sends.announcing() || !cleared.empty(); }
};

}  // namespace comm::transport::tcp
