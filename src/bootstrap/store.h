// Rendezvous key-value store over TCP: a server (hosted by commrun or by
// rank 0) and a client with four verbs, each bounded by a deadline. Every
// connection starts with a proof of the job's secret, both ways
// (common/handshake.h): the server answers only clients of its job, and a
// client talks only to its job's server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/deadline.h"

namespace comm::bootstrap {

// What one server holds at most, so that no client (a rank gone wrong, or a
// stranger before it is refused) can make it grow without bound. A client
// that would pass a limit gets an error naming it and is disconnected, with
// a line in the log; one that does not read its answers is not read from
// until it does.
struct StoreLimits {
  size_t maxKeyBytes = size_t{1} << 20;
  size_t maxValueBytes = size_t{1} << 20;
  size_t maxBytesHeld = size_t{256} << 20;        // keys and values, all clients together
  size_t maxParkedPerClient = 16384;              // gets and waits waiting for their keys
  size_t maxPendingReplyBytes = size_t{4} << 20;  // answers a client has not taken yet
  // Connections that have not yet proven the job's secret: past these the
  // oldest is closed (a client proves it within one round trip; a
  // stranger that says nothing would hold a descriptor for ever).
  size_t maxUnproven = 256;
  size_t maxUnprovenPerPeer = 64;  // ... from one host
};

// What a server holds now (StoreServer::usage).
struct StoreUsage {
  size_t clients = 0;            // connections, proven or not
  size_t unproven = 0;           // connections that have not yet proven the secret
  size_t bytesHeld = 0;          // keys and values
  size_t parkedWaits = 0;        // gets and waits waiting for keys
  size_t parkedKeys = 0;         // keys that parked waits wait for, counted per wait
  size_t pendingReplyBytes = 0;  // answers written but not yet taken by their clients
};

class StoreServer {
 public:
  // Listen on host:port ("" or "0.0.0.0" = every interface; port 0 = any free
  // one) and serve clients that prove `secret` from a background thread
  // until destroyed; others are dropped with a log line.
  // Throws comm::Error (COMM_ERR_BOOTSTRAP) when it cannot listen.
  StoreServer(const std::string& host, uint16_t port, const std::string& secret, StoreLimits limits = {});
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  uint16_t port() const;
  // As of the server's last wake-up (it publishes this each time it has
  // handled what woke it).
  StoreUsage usage() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class StoreClient {
 public:
  // Connect, retrying until `deadline` (the server may start later), and
  // prove `secret`. Throws comm::Error: COMM_ERR_TIMEOUT naming host:port
  // when it never answers, COMM_ERR_BOOTSTRAP when the server refuses the
  // secret or cannot prove it.
  StoreClient(const std::string& host, uint16_t port, const std::string& secret, Deadline deadline);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void set(const std::string& key, const std::string& value, Deadline deadline);
  // Wait until `key` exists, then return its value. COMM_ERR_TIMEOUT names the key.
  std::string get(const std::string& key, Deadline deadline);
  // Wait until every key exists.
  void wait(const std::vector<std::string>& keys, Deadline deadline);
  // Sets `key` to `value` only when `key` does not exist, atomically;
  // returns the key's value after it: `value`, or the one set before. Of
  // several clients racing, every one gets the first one's value.
  std::string setIfAbsent(const std::string& key, const std::string& value, Deadline deadline);
  // Atomically add `delta` to the integer at `key` (missing = 0); returns the new value.
  int64_t add(const std::string& key, int64_t delta, Deadline deadline);
  // The value of `key` if it exists now, without waiting.
  std::optional<std::string> check(const std::string& key, Deadline deadline);
  // Erases every key that starts with `prefix`.
  void erasePrefix(const std::string& prefix, Deadline deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace comm::bootstrap
