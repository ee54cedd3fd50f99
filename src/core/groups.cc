#include "core/groups.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "core/agreement.h"
#include "core/world.h"

namespace comm::core {
namespace {

// What the drawing member publishes instead of an id when it got none.
constexpr std::string_view kNoId = "no id: ";

// Tells a communicator from earlier ones that had its id (revocation
// notices still on their way to a rank that had left them).
uint64_t drawIdentity() {
  std::random_device device;
  return uint64_t{device()} << 32 | device();
}

std::shared_ptr<Communicator> communicatorOf(Communicator& parent, const std::vector<int>& members, uint16_t id,
                                             uint64_t identity, std::string name) {
  std::vector<int> worldRanks;
  for (int m : members) worldRanks.push_back(parent.worldRankOf(m));
  return std::make_shared<Communicator>(parent.worldPtr(), id, identity, std::move(worldRanks), std::move(name));
}

struct ChildId {
  uint16_t id;
  uint64_t identity;
};

// The id of a new communicator of `members` of `parent`: the first member
// draws a fresh one and publishes it under a key every member derives
// alike, so the members agree without messages.
ChildId childId(Communicator& parent, const std::vector<int>& members, const std::string& purpose) {
  std::string list;
  for (int m : members) list += fmt::format("{},", m);
  std::string key = fmt::format("{}:{}", purpose, list);
  int index = parent.nextChildIndex(key);
  std::string storeKey = fmt::format("child/{}/{}/{}", parent.id(), key, index);
  World& world = parent.world();
  uint16_t id;
  uint64_t identity = 0;
  if (world.size() == 1) {
    id = world.allocateCommunicatorId();
    identity = drawIdentity();
  } else if (members[0] == parent.rank()) {
    try {
      id = world.allocateCommunicatorId();
      identity = drawIdentity();
    } catch (const Error& error) {
      // The other members wait for the id: they learn why there is none.
      world.storeSet(storeKey, fmt::format("{}{} {}", kNoId, static_cast<int>(error.status()), error.what()));
      throw;
    }
    world.storeSet(storeKey, fmt::format("{} {}", id, identity));
  } else {
    std::string published = world.storeGetFrom(storeKey, parent.worldRankOf(members[0]), "the new communicator's id");
    if (published.starts_with(kNoId)) {
      int status = COMM_ERR_INTERNAL;
      int consumed = 0;
      std::sscanf(published.c_str() + kNoId.size(), "%d %n", &status, &consumed);
      fail(static_cast<comm_status_t>(status), "rank {} of '{}', which draws the new communicator's id, found none: {}",
           members[0], parent.name(), published.substr(kNoId.size() + consumed));
    }
    unsigned publishedId = 0;
    unsigned long long publishedIdentity = 0;
    if (std::sscanf(published.c_str(), "%u %llu", &publishedId, &publishedIdentity) != 2) {
      fail(COMM_ERR_BOOTSTRAP, "rank {} of '{}' published a malformed communicator id '{}'", members[0], parent.name(),
           published);
    }
    id = static_cast<uint16_t>(publishedId);
    identity = publishedIdentity;
  }
  return {id, identity};
}

std::shared_ptr<Communicator> makeChild(Communicator& parent, const std::vector<int>& members, const char* name,
                                        const std::string& purpose) {
  const auto [id, identity] = childId(parent, members, purpose);
  return communicatorOf(parent, members, id, identity, name != nullptr ? name : fmt::format("group-{}", id));
}

}  // namespace

std::shared_ptr<Communicator> worldCommunicator(const std::shared_ptr<World>& world) {
  std::vector<int> ranks(world->size());
  for (int r = 0; r < world->size(); ++r) ranks[r] = r;
  // Id 0 is the world's alone: no earlier communicator had it.
  return std::make_shared<Communicator>(world, 0, 0, std::move(ranks), "world");
}

std::shared_ptr<Communicator> createGroup(Communicator& parent, const std::vector<int>& members, const char* name) {
  return makeChild(parent, members, name, "group");
}

std::shared_ptr<Communicator> split(Communicator& parent, int color, int key, const char* name) {
  // Every rank publishes (color, key); the split's index keeps splits apart.
  int index = parent.nextChildIndex("split");
  std::vector<std::pair<int, int>> choices(parent.size());
  if (parent.world().size() == 1) {
    choices[0] = {color, key};
  } else {
    std::string prefix = fmt::format("split/{}/{}/", parent.id(), index);
    parent.world().storeSet(prefix + std::to_string(parent.rank()), fmt::format("{} {}", color, key));
    for (int r = 0; r < parent.size(); ++r) {
      std::string value = parent.world().storeGetFrom(prefix + std::to_string(r), parent.worldRankOf(r),
                                                      fmt::format("rank {}'s split choice", r));
      if (std::sscanf(value.c_str(), "%d %d", &choices[r].first, &choices[r].second) != 2) {
        fail(COMM_ERR_BOOTSTRAP, "rank {} published a malformed split choice '{}'", r, value);
      }
    }
  }
  if (color < 0) return nullptr;
  std::vector<int> members;
  for (int r = 0; r < parent.size(); ++r) {
    if (choices[r].first == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return choices[a].second < choices[b].second; });
  return makeChild(parent, members, name, fmt::format("split{}", index));
}

std::shared_ptr<Communicator> shrink(Communicator& parent, const char* name) {
  World& world = parent.world();
  for (;;) {
    const Agreement survivors = agree(parent, "comm_shrink", "shrink", ~0u, false);
    // The dead members will never release the parent's id: the rank whose
    // proposal was decided does it for those newly found dead.
    const int failed = static_cast<int>(survivors.failed.size());
    const int newlyFailed = failed - parent.failedMembersReleased();
    if (survivors.proposedHere && parent.id() != 0 && newlyFailed > 0) {
      world.releaseCommunicatorId(parent.id(), parent.size(), newlyFailed);
    }
    parent.setFailedMembersReleased(std::max(failed, parent.failedMembersReleased()));

    // Making it may fail on some members and not on others (one that dies
    // now leaves the others' node board unfinished), so the members agree
    // again on whether every one of them made it, and whether any died.
    std::optional<ChildId> id;
    std::shared_ptr<Communicator> child;
    std::optional<Error> failure;
    try {
      id = childId(parent, survivors.members, "shrink");
      child = communicatorOf(parent, survivors.members, id->id, id->identity,
                             name != nullptr ? name : fmt::format("{}-shrunk", parent.name()));
    } catch (const Error& error) {
      failure = error;
    }
    const Agreement made = agree(parent, "comm_shrink", "shrink-made", child ? 1 : 0, false);
    if (made.flags == 1 && made.failed.size() == survivors.failed.size()) return child;
    // Once more without the members that died. Each member that knows the
    // id gives it back once, the rank whose decision stood also for the
    // dead; when the member that drew it died first, nobody knows it.
    const int members = static_cast<int>(survivors.members.size());
    if (child) {
      child.reset();
    } else if (id) {
      world.releaseCommunicatorId(id->id, members);
    }
    const int died = static_cast<int>(made.failed.size() - survivors.failed.size());
    if (id && made.proposedHere && died > 0) world.releaseCommunicatorId(id->id, members, died);
    if (failure && failure->status() != COMM_ERR_REMOTE) throw *failure;
  }
}

}  // namespace comm::core
