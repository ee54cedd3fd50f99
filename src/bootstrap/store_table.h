// What the rendezvous store holds and how it answers (StoreServer's data,
// apart from its connections): keys and values within StoreLimits, and the
// gets and waits whose keys are missing, parked as waiters and answered
// when the last of their keys is created, so that clients never poll.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"

namespace comm::bootstrap {

// The answer frames of the store protocol (store_protocol.h).
std::string okFrame(uint64_t id);
std::string valueFrame(uint64_t id, std::string_view value);
std::string errorFrame(uint64_t id, std::string_view message);

// Where the table's answers go: the server's connection to a client, named
// by its descriptor.
class StoreReplies {
 public:
  virtual void reply(int client, std::string frame) = 0;
  // Answers request `id` with an error saying `why` (a limit it passes)
  // and drops the client.
  virtual void refuse(int client, uint64_t id, const std::string& why) = 0;

 protected:
  ~StoreReplies() = default;
};

class StoreTable {
 public:
  StoreTable(const StoreLimits& limits, StoreReplies& replies) : limits_(limits), replies_(replies) {}

  // Answers `request` of `client` now, or parks it until its keys exist.
  void handle(int client, StoreRequest request);
  // Forgets what `client` left: its parked waits and their places in the
  // keys' lists.
  void dropClient(int client);

  size_t bytesHeld() const { return bytesHeld_; }
  size_t parkedWaits() const { return waiters_.size(); }
  size_t parkedKeys() const { return parkedKeys_; }

 private:
  // A get or wait that arrived before all of its keys existed.
  struct Waiter {
    int client;
    uint64_t requestId;
    StoreOp op;
    std::string key;                   // the key whose value a get returns
    std::vector<std::string> missing;  // its keys still absent when it parked
    size_t left;                       // how many of those are still absent
  };

  // Accounts for `key` holding `valueBytes` from now on; refuses the client
  // and returns false when that would pass the limit on the bytes held.
  bool hold(int client, uint64_t id, const std::string& key, size_t valueBytes);
  void add(int client, uint64_t id, const std::string& key, int64_t delta);
  void park(int client, uint64_t id, StoreOp op, std::string key, std::vector<std::string> missing);
  // Answers the waiters whose last missing key `key` was.
  void keyCreated(const std::string& key);
  // Removes `waiter` from the lists of the keys it still waits for (all but
  // `created`, whose list is gone already).
  void forget(uint64_t waiterId, const Waiter& waiter, std::string_view created = {});

  StoreLimits limits_;
  StoreReplies& replies_;
  // Ordered, so that the keys under one prefix are one range to erase.
  std::map<std::string, std::string, std::less<>> data_;
  size_t bytesHeld_ = 0;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::unordered_map<std::string, std::unordered_set<uint64_t>> waitersByKey_;
  std::unordered_map<int, size_t> parkedPerClient_;  // its waits parked now, for clients with any
  size_t parkedKeys_ = 0;                            // entries of waitersByKey_, all keys together
  uint64_t nextWaiter_ = 0;
};

}  // namespace comm::bootstrap
