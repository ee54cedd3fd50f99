// After a failure: comm_revoke, comm_failed_ranks, comm_agree and
// comm_shrink (blocking and not), argument checks around core/revocation.h, core/agreement.h
// and core/groups.h.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/guard.h"
#include "api/making.h"
#include "api/objects.h"
#include "core/agreement.h"
#include "core/groups.h"
#include "core/world.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

void checkCapacity(const int* ranks, int capacity, const char* name) {
  if (capacity < 0) fail(COMM_ERR_INVALID_ARGUMENT, "capacity {} is negative", capacity);
  if (ranks == nullptr && capacity > 0)
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is NULL but capacity is {}", name, capacity);
}

void reportRanks(const std::vector<int>& ranks, int* count, int* out, int capacity) {
  if (count != nullptr) *count = static_cast<int>(ranks.size());
  std::copy_n(ranks.begin(), std::min<size_t>(ranks.size(), static_cast<size_t>(capacity)), out);
}

// A communicator comm_abort or comm_destroy stopped takes part in no
// agreement; a revoked one only in a shrink.
void checkNotStopped(const comm::core::Communicator& c, bool revokedWillDo) {
  if (!c.aborted()) return;
  const comm_status_t status = c.abortStatus();
  if (status == COMM_ERR_REVOKED && revokedWillDo) return;
  fail(status, "'{}': {}{}", c.name(), c.abortReason(),
       status == COMM_ERR_REVOKED ? "; shrink it (comm_shrink), then agree on the new communicator" : "");
}

void shrink(const char* call, comm_t** out, comm_t* comm, const char* name, comm_handle_t** handle) {
  require(out, "out");
  comm::core::Communicator& c = comm::api::communicator(comm);
  checkNotStopped(c, true);
  comm::api::makeFrom(call, out, handle, c,
                      [&c, copied = comm::api::CopiedName(name)] { return comm::core::shrink(c, copied.get()); });
}

void grow(const char* call, comm_t** out, comm_t* comm, int count, const char* name, comm_handle_t** handle) {
  require(out, "out");
  comm::core::Communicator& c = comm::api::communicator(comm);
  if (count < 1 || count > 65535) fail(COMM_ERR_INVALID_ARGUMENT, "count {} is outside 1..65535", count);
  checkNotStopped(c, false);
  comm::api::makeFrom(call, out, handle, c, [&c, count, copied = comm::api::CopiedName(name)] {
    return comm::core::grow(c, count, copied.get());
  });
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_revoke(comm_t* comm) {
  return guard("comm_revoke", [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const auto failure = c.world().firstFailure();
    c.revoke(failure ? fmt::format("comm_revoke, after {}", failure->what) : std::string("comm_revoke"));
  });
}

COMM_API comm_status_t comm_failed_ranks(int* out_count, int* out_ranks, int capacity, const comm_t* comm) {
  return guard("comm_failed_ranks", [&] {
    require(out_count, "out_count");
    comm::core::Communicator& c = comm::api::communicator(comm);
    checkCapacity(out_ranks, capacity, "out_ranks");
    std::vector<int> failed;
    for (const auto& [worldRank, what] : c.world().knownFailures()) {
      const int rank = c.rankOfWorld(worldRank);
      if (rank >= 0) failed.push_back(rank);
    }
    std::sort(failed.begin(), failed.end());
    reportRanks(failed, out_count, out_ranks, capacity);
  });
}

COMM_API comm_status_t comm_agree(uint32_t* flags, int* out_failed_count, int* out_failed_ranks, int capacity,
                                  comm_t* comm) {
  return guard("comm_agree", [&] {
    require(flags, "flags");
    comm::core::Communicator& c = comm::api::communicator(comm);
    checkCapacity(out_failed_ranks, capacity, "out_failed_ranks");
    checkNotStopped(c, false);
    const comm::core::Agreement agreement = comm::core::agree(c, "comm_agree", "agree", *flags, true);
    *flags = agreement.flags;
    reportRanks(agreement.failed, out_failed_count, out_failed_ranks, capacity);
  });
}

COMM_API comm_status_t comm_shrink(comm_t** out, comm_t* comm, const char* name) {
  return guardOut("comm_shrink", out, [&] { shrink("comm_shrink", out, comm, name, nullptr); });
}

COMM_API comm_status_t comm_shrink_async(comm_t** out, comm_t* comm, const char* name, comm_handle_t** handle) {
  return guardOut("comm_shrink_async", out, [&] {
    require(handle, "handle");
    shrink("comm_shrink_async", out, comm, name, handle);
  });
}

COMM_API comm_status_t comm_grow(comm_t** out, comm_t* comm, int count, const char* name) {
  return guardOut("comm_grow", out, [&] { grow("comm_grow", out, comm, count, name, nullptr); });
}

COMM_API comm_status_t comm_grow_async(comm_t** out, comm_t* comm, int count, const char* name,
                                       comm_handle_t** handle) {
  return guardOut("comm_grow_async", out, [&] {
    require(handle, "handle");
    grow("comm_grow_async", out, comm, count, name, handle);
  });
}

}  // extern "C"
