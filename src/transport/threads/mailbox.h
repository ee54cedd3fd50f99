// One rank's receiving side: its posted receives and the messages that came
// before them, per peer (matching_engine.h), behind a lock the sending
// threads take. A send that meets a posted receive copies straight into
// it; otherwise a copy waits for the receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "transport/matching_engine.h"
#include "transport/record_pool.h"
#include "transport/transport.h"

namespace comm::transport::threads {

struct Receive {
  uint64_t tag = 0;
  Request* request = nullptr;
  void* data = nullptr;
  size_t size = 0;
  Receive* prev = nullptr;
  Receive* next = nullptr;
};

struct Arrival {
  uint64_t tag = 0;
  size_t size = 0;
  bool rendezvous = false;  // never: every message comes whole
  std::vector<char> bytes;  // keeps its capacity while the record is reused
  Arrival* prev = nullptr;
  Arrival* next = nullptr;
};

class Mailbox {
 public:
  // A message of `size` bytes at `data` from rank `from` lands in its
  // receive, or waits as a copy. False when this rank has left.
  bool deliver(int from, uint64_t tag, const void* data, size_t size);
  // A receive of `size` bytes from `from`: met by a message that waits, or
  // posted for the next one of its tag.
  void post(int from, uint64_t tag, void* data, size_t size, Request& request);
  // Withdraws the posted receive of `request`, if it is one here.
  void cancel(Request& request);
  // Rank `peer` has left: its posted receives fail, and so do later ones
  // that no message of its meets.
  void peerLeft(int peer);
  // This rank leaves: messages are refused, receives fail.
  void close();

 private:
  using Engine = MatchingEngine<Receive, Arrival>;

  // Peers are known by the messages and receives that name them: a peer
  // may send before this rank has connected.
  Engine& engine(int peer);

  std::mutex mutex_;  // guards everything below
  std::vector<Engine> peers_;
  std::vector<bool> gone_;
  bool closed_ = false;
  RecordPool<Receive> receives_;
  RecordPool<Arrival> arrivals_;
};

}  // namespace comm::transport::threads
