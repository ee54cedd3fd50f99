#include "core/groups.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "core/agreement.h"
#include "core/grow_seats.h"
#include "core/world.h"

namespace comm::core {
namespace {

// What the member that works out a value for the others (sharedByOne)
// publishes when it could not: the status and why follow.
constexpr std::string_view kNone = "none: ";

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

// A value that one member of `parent`, `writer`, works out with `work` and
// publishes under store key `key`, so that the members agree without
// messages: `work` runs on the writer alone; when it throws, the others
// fail with its status and why instead of waiting.
std::string sharedByOne(Communicator& parent, const std::string& key, int writer, std::string_view what,
                        const std::function<std::string()>& work) {
  World& world = parent.world();
  if (world.size() == 1) return work();
  if (parent.rank() == writer) {
    std::string value;
    try {
      value = work();
    } catch (const Error& error) {
      world.storeSet(key, fmt::format("{}{} {}", kNone, static_cast<int>(error.status()), error.what()));
      throw;
    }
    world.storeSet(key, value);
    return value;
  }
  std::string published = world.storeGetFrom(key, parent.worldRankOf(writer), what);
  if (published.starts_with(kNone)) {
    int status = COMM_ERR_INTERNAL;
    int consumed = 0;
    std::sscanf(published.c_str() + kNone.size(), "%d %n", &status, &consumed);
    fail(static_cast<comm_status_t>(status), "rank {} of '{}', which works out {}, failed: {}", writer, parent.name(),
         what, published.substr(kNone.size() + consumed));
  }
  return published;
}

// The id of a new communicator of `members` of `parent`: the first member
// draws a fresh one and publishes it under a key every member derives alike.
ChildId childId(Communicator& parent, const std::vector<int>& members, const std::string& purpose) {
  std::string list;
  for (int m : members) list += fmt::format("{},", m);
  std::string key = fmt::format("{}:{}", purpose, list);
  int index = parent.nextChildIndex(key);
  std::string storeKey = fmt::format("child/{}/{}/{}", parent.id(), key, index);
  const std::string published = sharedByOne(parent, storeKey, members[0], "the new communicator's id", [&parent] {
    const uint16_t id = parent.world().allocateCommunicatorId();
    return fmt::format("{} {}", id, drawIdentity());
  });
  unsigned id = 0;
  unsigned long long identity = 0;
  if (std::sscanf(published.c_str(), "%u %llu", &id, &identity) != 2) {
    fail(COMM_ERR_BOOTSTRAP, "rank {} of '{}' published a malformed communicator id '{}'", members[0], parent.name(),
         published);
  }
  return {static_cast<uint16_t>(id), identity};
}

// The seat of this member of `parent` in a world of its own for `members`
// (parent ranks, in their new order) and, after them, `newcomers` ranks
// started with COMM_JOIN=1 (core/grow_seats.h): World::createGrown makes
// it, with connections of its own. The first member seats them all.
Seat seatInNewWorld(Communicator& parent, const std::vector<int>& members, int newcomers) {
  World& world = parent.world();
  const std::string key =
      fmt::format("child/{}/world/{}/{}", parent.id(), parent.identity(), parent.nextChildIndex("world"));
  const std::string epoch = sharedByOne(parent, key, members[0], "the new world", [&] {
    std::vector<Occupant> occupants;
    for (int m : members) {
      const PeerRecord& peer = world.peer(parent.worldRankOf(m));
      occupants.push_back({peer.launchSlot, peer.pid, peer.host, peer.node});
    }
    return std::to_string(seatNewcomers(world, occupants, newcomers, parent.timeout()));
  });
  Seat seat{.epoch = std::atoi(epoch.c_str()),
            .rank = static_cast<int>(std::find(members.begin(), members.end(), parent.rank()) - members.begin())};
  seat.occupants = grownWorldOccupants(world, seat.epoch);
  return seat;
}

std::shared_ptr<Communicator> makeChild(Communicator& parent, const std::vector<int>& members, const char* name,
                                        const std::string& purpose) {
  const auto [id, identity] = childId(parent, members, purpose);
  return communicatorOf(parent, members, id, identity, name != nullptr ? name : fmt::format("group-{}", id));
}

}  // namespace

std::shared_ptr<Communicator> worldCommunicator(const std::shared_ptr<World>& world, std::string name) {
  std::vector<int> ranks(world->size());
  for (int r = 0; r < world->size(); ++r) ranks[r] = r;
  // Id 0 is the world's alone: no earlier communicator had it.
  return std::make_shared<Communicator>(world, 0, 0, std::move(ranks), std::move(name));
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
    if (survivors.proposer == parent.rank() && parent.id() != 0 && newlyFailed > 0) {
      world.releaseCommunicatorId(parent.id(), parent.size(), newlyFailed);
    }
    parent.setFailedMembersReleased(std::max(failed, parent.failedMembersReleased()));

    // Making it may fail on some members and not on others (one that dies
    // now leaves the others' node board unfinished), so the members agree
    // again on whether every one of them made it, and whether any died.
    std::optional<ChildId> id;
    std::shared_ptr<Communicator> child;
    std::optional<Error> failure;
    std::string childName = name != nullptr ? name : fmt::format("{}-shrunk", parent.name());
    try {
      if (world.size() == 1 || world.transport().survivesPeerDeath()) {
        id = childId(parent, survivors.members, "shrink");
        child = communicatorOf(parent, survivors.members, id->id, id->identity, std::move(childName));
      } else {
        // The survivors go on with connections of their own, as after a grow.
        child = worldCommunicator(World::createGrown(world, seatInNewWorld(parent, survivors.members, 0)),
                                  std::move(childName));
      }
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
    if (id && made.proposer == parent.rank() && died > 0) world.releaseCommunicatorId(id->id, members, died);
    if (failure && failure->status() != COMM_ERR_REMOTE) throw *failure;
  }
}

std::shared_ptr<Communicator> grow(Communicator& parent, int count, const char* name) {
  // Each member's count in the low half of the flags and its complement in
  // the high half: the AND keeps them complements only when all are equal.
  const uint32_t asked = static_cast<uint32_t>(count) | (~static_cast<uint32_t>(count) & 0xffffu) << 16;
  const Agreement agreement = agree(parent, "comm_grow", "grow", asked, true);
  if (!agreement.failed.empty()) {
    fail(COMM_ERR_REMOTE,
         "rank {} of '{}' has failed ({} failed in all): shrink the communicator (comm_shrink), "
         "then grow the survivors",
         agreement.failed.front(), parent.name(), agreement.failed.size());
  }
  if ((agreement.flags & 0xffffu) != (~agreement.flags >> 16 & 0xffffu)) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "the members of '{}' asked for different counts of new ranks ({} here); every "
         "member must pass the same count",
         parent.name(), count);
  }
  World& world = parent.world();
  if (!world.hasStore()) {
    fail(COMM_ERR_INVALID_USAGE,
         "a world of one rank has no store where newcomers could meet it; launch the job "
         "with commrun, or with a store (COMM_MASTER_ADDR and COMM_MASTER_PORT), to grow it");
  }
  std::vector<int> members(parent.size());
  for (int r = 0; r < parent.size(); ++r) members[r] = r;
  const Seat seat = seatInNewWorld(parent, members, count);
  // Making it may fail on some members and not on others (one that dies
  // now leaves the others waiting for its address): they agree on whether
  // all made it and none died, as a shrink does, and tell the newcomers.
  std::shared_ptr<World> grown;
  std::optional<Error> failure;
  try {
    grown = World::createGrown(world, seat);
  } catch (const Error& error) {
    failure = error;
  }
  const Agreement made = agree(parent, "comm_grow", "grow-made", grown ? 1 : 0, false);
  std::string why;
  if (!made.failed.empty()) {
    why = fmt::format("rank {} of '{}' died while the grown communicator was made; shrink, then grow again",
                      made.failed.front(), parent.name());
  } else if (made.flags != 1) {
    why = fmt::format("a rank of '{}' could not make its part of the grown communicator", parent.name());
  }
  settleGrownWorld(world, seat.epoch, why);
  if (failure) throw *failure;
  if (!why.empty()) fail(COMM_ERR_REMOTE, "{}", why);
  return worldCommunicator(grown, name != nullptr ? name : fmt::format("{}-grown", parent.name()));
}

}  // namespace comm::core
