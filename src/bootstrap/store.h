// Rendezvous key-value store over TCP: a server (hosted by commrun or by
// rank 0) and a client with four verbs, each bounded by a deadline. Every
// connection starts with a proof of the job's secret, both ways
// (common/handshake.h): the server answers only clients of its job, and a
// client talks only to its job's server.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/deadline.h"

namespace comm::bootstrap {

class StoreServer {
 public:
  // Listen on host:port ("" or "0.0.0.0" = every interface; port 0 = any free
  // one) and serve clients that prove `secret` from a background thread
  // until destroyed; others are dropped with a log line.
  // Throws comm::Error (COMM_ERR_BOOTSTRAP) when it cannot listen.
  StoreServer(const std::string& host, uint16_t port, const std::string& secret);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  uint16_t port() const;

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
  // Atomically add `delta` to the integer at `key` (missing = 0); returns the new value.
  int64_t add(const std::string& key, int64_t delta, Deadline deadline);
  // The value of `key` if it exists now, without waiting.
  std::optional<std::string> check(const std::string& key, Deadline deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace comm::bootstrap
