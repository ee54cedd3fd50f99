#include "core/communicator_ids.h"

#include <utility>

#include <fmt/format.h>

#include "common/error.h"

namespace comm::core {

CommunicatorIds::CommunicatorIds(Store store, uint32_t ids) : store_(std::move(store)), ids_(ids) {}

uint16_t CommunicatorIds::allocate() {
  for (uint32_t attempt = 0; attempt < ids_; ++attempt) {
    const int64_t count = store_.add("comm/next_id", 1);
    const auto id = static_cast<uint16_t>((count - 1) % ids_ + 1);
    const std::string live = fmt::format("comm/live/{}", id);
    if (store_.add(live, 1) == 1) return id;
    // Held by a live communicator: give the claim back, try the next.
    store_.add(live, -1);
  }
  fail(COMM_ERR_NO_MEMORY, "all {} communicator ids are held by live communicators; destroy some first", ids_);
}

void CommunicatorIds::release(uint16_t id, int members, int count) {
  const std::string released = fmt::format("comm/released/{}/", id);
  // Only the release that reaches the count frees it: one more (a member
  // a shrink counted as dead that was not) must not free it again.
  const int64_t total = store_.add(released + "count", count);
  if (total < members || total - count >= members) return;
  for (const std::string& prefix : keyPrefixes(id)) store_.erasePrefix(prefix);
  store_.erasePrefix(released);
  store_.add(fmt::format("comm/live/{}", id), -1);
}

std::vector<std::string> CommunicatorIds::keyPrefixes(uint16_t id) {
  // Written where the keys are made: core/node_board.cc (board/) and
  // api/group_api.cc (split/, child/).
  return {fmt::format("board/{}/", id), fmt::format("split/{}/", id), fmt::format("child/{}/", id)};
}

}  // namespace comm::core
