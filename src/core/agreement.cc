#include "core/agreement.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/growing_nap.h"
#include "core/communicator.h"
#include "core/world.h"

namespace comm::core {
namespace {

// The store keys of agreement `index` of kind `purpose` on `comm`, under
// its id's child/ prefix, so that they go when its id does
// (CommunicatorIds::keyPrefixes).
std::string keyPrefix(const Communicator& comm, std::string_view purpose, int index) {
  return fmt::format("child/{}/ft/{}/{}{}/", comm.id(), comm.identity(), purpose, index);
}

// A decision reads "PROPOSER FLAGS RANK,RANK,...", or kRevoked and why. Two
// ranks may propose the same set: the proposer tells whose was written.
constexpr std::string_view kRevoked = "revoked: ";

std::string formatDecision(uint32_t flags, const std::vector<int>& members, int proposer) {
  return fmt::format("{} {} {}", proposer, flags, fmt::join(members, ","));
}

Agreement parseDecision(const Communicator& comm, const std::string& text) {
  Agreement agreement;
  unsigned long flags = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%d %lu %n", &agreement.proposer, &flags, &consumed) != 2) {
    fail(COMM_ERR_INTERNAL, "malformed agreement '{}' in the store", text);
  }
  agreement.flags = static_cast<uint32_t>(flags);
  const std::string list = text.substr(consumed);
  std::vector<bool> member(comm.size(), false);
  for (size_t from = 0; from < list.size();) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    const int rank = std::atoi(list.substr(from, comma - from).c_str());
    if (rank < 0 || rank >= comm.size()) fail(COMM_ERR_INTERNAL, "malformed agreement '{}' in the store", text);
    member[rank] = true;
    from = comma + 1;
  }
  for (int r = 0; r < comm.size(); ++r) (member[r] ? agreement.members : agreement.failed).push_back(r);
  return agreement;
}

}  // namespace

Agreement agree(Communicator& comm, std::string_view call, std::string_view purpose, uint32_t flags,
                bool stopOnRevoke) {
  if (comm.size() == 1) {
    return Agreement{.members = {0}, .flags = flags, .proposer = 0};
  }
  World& world = comm.world();
  const int index = comm.nextChildIndex(fmt::format("agreement:{}", purpose));
  const std::string prefix = keyPrefix(comm, purpose, index);
  const std::string decisionKey = prefix + "decided";
  world.storeSet(fmt::format("{}in/{}", prefix, comm.rank()), std::to_string(flags));

  // Per member: its value once seen, or that it was proven dead.
  enum class Seen { kNothing, kValue, kDead };
  std::vector<Seen> seen(comm.size(), Seen::kNothing);
  std::vector<uint32_t> values(comm.size(), ~0u);
  seen[comm.rank()] = Seen::kValue;
  values[comm.rank()] = flags;
  const Deadline deadline = comm.deadline();
  GrowingNap nap;
  std::optional<Agreement> decided;
  for (;;) {
    std::optional<std::string> decision = world.storeCheck(decisionKey);
    // Takes in what peers sent: a revoke notice among it.
    while (world.transport().progress()) {
    }
    if (!decision && stopOnRevoke && comm.aborted() && comm.abortStatus() == COMM_ERR_REVOKED) {
      // The ranks that saw the revoke and those that did not must still
      // decide alike: the revoke is proposed like any other outcome.
      decision = world.storeSetIfAbsent(decisionKey, fmt::format("{}{}", kRevoked, comm.abortReason()));
    }
    if (decision && decision->starts_with(kRevoked)) {
      fail(COMM_ERR_REVOKED, "{} on '{}': {}", call, comm.name(), decision->substr(kRevoked.size()));
    }
    if (!decision) {
      bool everyoneSeen = true;
      for (int r = 0; r < comm.size(); ++r) {
        if (seen[r] != Seen::kNothing) continue;
        if (std::optional<std::string> value = world.storeCheck(fmt::format("{}in/{}", prefix, r))) {
          seen[r] = Seen::kValue;
          values[r] = static_cast<uint32_t>(std::stoul(*value));
        } else if (world.failureEvidence(comm.worldRankOf(r))) {
          seen[r] = Seen::kDead;
        } else {
          everyoneSeen = false;
        }
      }
      if (everyoneSeen) {
        std::vector<int> members;
        uint32_t all = ~0u;
        for (int r = 0; r < comm.size(); ++r) {
          if (seen[r] != Seen::kValue) continue;
          members.push_back(r);
          all &= values[r];
        }
        decision = world.storeSetIfAbsent(decisionKey, formatDecision(all, members, comm.rank()));
      }
    }
    if (decision) {
      decided = parseDecision(comm, *decision);
      break;
    }
    // comm_abort or comm_destroy on another thread (a revoke does not stop a shrink).
    if (comm.aborted() && comm.abortStatus() != COMM_ERR_REVOKED) {
      fail(comm.abortStatus(), "{} on '{}': {}", call, comm.name(), comm.abortReason());
    }
    if (deadline.expired()) {
      std::vector<int> missing;
      for (int r = 0; r < comm.size(); ++r) {
        if (seen[r] == Seen::kNothing) missing.push_back(r);
      }
      fail(COMM_ERR_TIMEOUT,
           "{} on '{}': ranks {} neither took part nor are known to have failed within the timeout ({} ms)", call,
           comm.name(), fmt::join(missing, ", "), comm.timeout().count());
    }
    nap.take();
  }
  if (!std::binary_search(decided->members.begin(), decided->members.end(), comm.rank())) {
    fail(COMM_ERR_REMOTE, "{} on '{}': the other members found this rank failed and agreed without it", call,
         comm.name());
  }
  // Every live member has begun this agreement, so each has read the one
  // before: its keys can go.
  if (decided->proposer == comm.rank() && index > 0) {
    try {
      world.storeErasePrefix(keyPrefix(comm, purpose, index - 1));
    } catch (const Error&) {
      // Only the store's memory is at stake; the decision stands.
    }
  }
  return *decided;
}

}  // namespace comm::core
