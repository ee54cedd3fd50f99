// comm_group_create, comm_split (blocking and not), comm_split_by_node, rank translation:
// argument checks around core/groups.h.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/guard.h"
#include "api/making.h"
#include "api/objects.h"
#include "core/groups.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

void groupCreate(const char* call, comm_t** out, comm_t* parent, int nranks, const int* ranks, const char* name,
                 comm_handle_t** handle) {
  require(out, "out");
  comm::core::Communicator& p = comm::api::communicator(parent);
  if (nranks <= 0 || nranks > p.size()) fail(COMM_ERR_INVALID_ARGUMENT, "nranks {} is outside 1..{}", nranks, p.size());
  require(ranks, "ranks");
  std::set<int> seen;
  for (int i = 0; i < nranks; ++i) {
    comm::api::checkRank(p, ranks[i], "ranks[i]");
    if (!seen.insert(ranks[i]).second) fail(COMM_ERR_INVALID_ARGUMENT, "rank {} appears twice in ranks", ranks[i]);
  }
  if (!seen.count(p.rank())) {
    fail(COMM_ERR_INVALID_USAGE, "rank {} of '{}' is not in ranks; only members call {}", p.rank(), p.name(), call);
  }
  comm::api::makeFrom(call, out, handle, p,
                      [&p, members = std::vector<int>(ranks, ranks + nranks), copied = comm::api::CopiedName(name)] {
                        return comm::core::createGroup(p, members, copied.get());
                      });
}

void split(const char* call, comm_t** out, comm_t* parent, int color, int key, const char* name,
           comm_handle_t** handle) {
  require(out, "out");
  comm::core::Communicator& p = comm::api::communicator(parent);
  if (color < 0 && color != COMM_UNDEFINED)
    fail(COMM_ERR_INVALID_ARGUMENT, "color {} is negative (COMM_UNDEFINED is -1)", color);
  // COMM_UNDEFINED: *out stays NULL (guardOut); the rank still takes part.
  comm::api::makeFrom(call, color < 0 ? nullptr : out, handle, p,
                      [&p, color, key, copied = comm::api::CopiedName(name)] {
                        return comm::core::split(p, color, key, copied.get());
                      });
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_group_create(comm_t** out, comm_t* parent, int nranks, const int* ranks, const char* name) {
  return guardOut("comm_group_create", out,
                  [&] { groupCreate("comm_group_create", out, parent, nranks, ranks, name, nullptr); });
}

COMM_API comm_status_t comm_group_create_async(comm_t** out, comm_t* parent, int nranks, const int* ranks,
                                               const char* name, comm_handle_t** handle) {
  return guardOut("comm_group_create_async", out, [&] {
    require(handle, "handle");
    groupCreate("comm_group_create_async", out, parent, nranks, ranks, name, handle);
  });
}

COMM_API comm_status_t comm_split(comm_t** out, comm_t* parent, int color, int key, const char* name) {
  return guardOut("comm_split", out, [&] { split("comm_split", out, parent, color, key, name, nullptr); });
}

COMM_API comm_status_t comm_split_async(comm_t** out, comm_t* parent, int color, int key, const char* name,
                                        comm_handle_t** handle) {
  return guardOut("comm_split_async", out, [&] {
    require(handle, "handle");
    split("comm_split_async", out, parent, color, key, name, handle);
  });
}

COMM_API comm_status_t comm_split_by_node(comm_t** out, comm_t* parent, const char* name) {
  return guardOut("comm_split_by_node", out, [&] {
    require(out, "out");
    comm::core::Communicator& p = comm::api::communicator(parent);
    split("comm_split_by_node", out, parent, p.nodes().nodeOf[p.rank()], p.rank(), name, nullptr);
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
