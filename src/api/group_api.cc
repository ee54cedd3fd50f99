// comm_group_create, comm_split, rank translation.
#include <algorithm>
#include <set>

#include "api/guard.h"
#include "api/objects.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

// Make the child communicator of `parent` holding `members` (parent ranks, in
// child rank order). The first member draws a fresh id and publishes it under
// a key every member derives alike, so the members agree without messages.
comm_communicator* makeChild(comm::core::Communicator& parent, const std::vector<int>& members, const char* name,
                             const std::string& purpose) {
  std::string list;
  for (int m : members) list += fmt::format("{},", m);
  std::string key = fmt::format("{}:{}", purpose, list);
  int index = parent.nextChildIndex(key);
  std::string storeKey = fmt::format("child/{}/{}/{}", parent.id(), key, index);
  comm::core::World& world = parent.world();
  uint16_t id;
  if (world.size() == 1) {
    id = world.allocateCommunicatorId();
  } else if (members[0] == parent.rank()) {
    id = world.allocateCommunicatorId();
    world.storeSet(storeKey, std::to_string(id));
  } else {
    id = static_cast<uint16_t>(std::stoi(world.storeGet(storeKey)));
  }
  std::vector<int> worldRanks;
  for (int m : members) worldRanks.push_back(parent.worldRankOf(m));
  std::string childName = name != nullptr ? name : fmt::format("group-{}", id);
  auto* child = new comm_communicator{
      std::make_shared<comm::core::Communicator>(parent.worldPtr(), id, std::move(worldRanks), std::move(childName))};
  comm::api::liveCommunicators().add(child);
  return child;
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_group_create(comm_t** out, comm_t* parent, int nranks, const int* ranks, const char* name) {
  return guardOut("comm_group_create", out, [&] {
    require(out, "out");
    comm::core::Communicator& p = comm::api::communicator(parent);
    if (nranks <= 0 || nranks > p.size())
      fail(COMM_ERR_INVALID_ARGUMENT, "nranks {} is outside 1..{}", nranks, p.size());
    require(ranks, "ranks");
    std::set<int> seen;
    for (int i = 0; i < nranks; ++i) {
      comm::api::checkRank(p, ranks[i], "ranks[i]");
      if (!seen.insert(ranks[i]).second) fail(COMM_ERR_INVALID_ARGUMENT, "rank {} appears twice in ranks", ranks[i]);
    }
    if (!seen.count(p.rank())) {
      fail(COMM_ERR_INVALID_USAGE, "rank {} of '{}' is not in ranks; only members call comm_group_create", p.rank(),
           p.name());
    }
    *out = makeChild(p, std::vector<int>(ranks, ranks + nranks), name, "group");
  });
}

COMM_API comm_status_t comm_split(comm_t** out, comm_t* parent, int color, int key, const char* name) {
  return guardOut("comm_split", out, [&] {
    require(out, "out");
    comm::core::Communicator& p = comm::api::communicator(parent);
    if (color < 0 && color != COMM_UNDEFINED)
      fail(COMM_ERR_INVALID_ARGUMENT, "color {} is negative (COMM_UNDEFINED is -1)", color);
    // Every rank publishes (color, key); the split's index keeps splits apart.
    int index = p.nextChildIndex("split");
    std::vector<std::pair<int, int>> choices(p.size());
    if (p.world().size() == 1) {
      choices[0] = {color, key};
    } else {
      std::string prefix = fmt::format("split/{}/{}/", p.id(), index);
      p.world().storeSet(prefix + std::to_string(p.rank()), fmt::format("{} {}", color, key));
      for (int r = 0; r < p.size(); ++r) {
        std::string value = p.world().storeGet(prefix + std::to_string(r));
        if (std::sscanf(value.c_str(), "%d %d", &choices[r].first, &choices[r].second) != 2) {
          fail(COMM_ERR_BOOTSTRAP, "rank {} published a malformed split choice '{}'", r, value);
        }
      }
    }
    if (color == COMM_UNDEFINED) return;  // *out stays NULL (guardOut)
    std::vector<int> members;
    for (int r = 0; r < p.size(); ++r) {
      if (choices[r].first == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return choices[a].second < choices[b].second; });
    *out = makeChild(p, members, name, fmt::format("split{}", index));
  });
}

COMM_API comm_status_t comm_rank_to_world(int* out, const comm_t* comm, int rank) {
  return guard("comm_rank_to_world", [&] {
    require(out, "out");
    const comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, rank, "rank");
    *out = c.worldRankOf(rank);
  });
}

COMM_API comm_status_t comm_rank_from_world(int* out, const comm_t* comm, int world_rank) {
  return guard("comm_rank_from_world", [&] {
    require(out, "out");
    comm::core::Communicator& c = comm::api::communicator(comm);
    if (world_rank < 0 || world_rank >= c.world().size()) {
      fail(COMM_ERR_INVALID_ARGUMENT, "world_rank {} is outside 0..{}", world_rank, c.world().size() - 1);
    }
    *out = c.rankOfWorld(world_rank);
  });
}

}  // extern "C"
