// Communicator ids: every message tag carries one in 16 bits, so at most
// 65535 communicators besides the world (id 0) can live at once, and ids
// must come back when communicators go.
//
// In the store (or, in a world of one, a map): comm/next_id counts
// allocations; an allocation tries id (count - 1) % 65535 + 1 and claims it
// when comm/live/<id> goes from 0 to 1 (an add, so two allocators cannot
// both win). Each member that destroys its communicator adds 1 to
// comm/released/<id>/count; the one that completes the count erases the keys the
// communicator used (keyPrefixes) and then frees the id, so a communicator
// that gets the id later never reads a key of the one before.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comm::core {

class CommunicatorIds {
 public:
  // The store operations it needs, with their deadlines bound.
  struct Store {
    std::function<int64_t(const std::string& key, int64_t delta)> add;
    std::function<void(const std::string& prefix)> erasePrefix;
  };

  static constexpr uint32_t kIds = 65535;

  // `ids`: how many there are (tests use fewer).
  explicit CommunicatorIds(Store store, uint32_t ids = kIds);

  // An id no live communicator of the job holds, now held. Throws
  // comm::Error (COMM_ERR_NO_MEMORY) when every id is held.
  uint16_t allocate();
  // `count` of the `members` members of communicator `id` are done with
  // it; the last one frees it.
  void release(uint16_t id, int members, int count = 1);

  // The prefixes of the store keys that belong to communicator `id`: its
  // node board's, and those of the splits and groups made from it.
  static std::vector<std::string> keyPrefixes(uint16_t id);

 private:
  Store store_;
  uint32_t ids_;
};

}  // namespace comm::core
