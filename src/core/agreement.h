// Fault-tolerant agreement among the live members of a communicator
// (comm_agree, comm_shrink): every live member gets the same decision, even
// when members die during the call, and no member waits for a dead one.
//
// The rendezvous store is the referee; it outlives every rank under
// commrun, so no failure detector has to be perfect:
//  - each member writes its value under the agreement's key;
//  - then it waits, for every member, until that member's value is there
//    or the member is proven dead (World::failureEvidence);
//  - it proposes the members whose values it saw, and the first proposal
//    written (StoreClient::setIfAbsent) is the decision every member reads.
// Two ranks' views can differ (a member writes its value and dies while
// another looks), which is why the decision is one proposal, not a merge.
// A member proven dead by mistake but alive finds itself left out and fails.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace comm::core {

class Communicator;

struct Agreement {
  std::vector<int> members;  // the ranks whose values were decided on, ascending; this rank among them
  std::vector<int> failed;   // the other ranks of the communicator: found failed
  uint32_t flags = 0;        // the bitwise AND of the members' flags
  int proposer = -1;         // the rank whose proposal was decided
};

// The next agreement of kind `purpose` on `comm` (each member counts its
// own calls; they make them in the same order), for `call`. `flags` is this
// rank's value. With `stopOnRevoke`, a revoke before the decision makes it
// fail on every member (COMM_ERR_REVOKED), and a revoke after it on none.
// Throws comm::Error: COMM_ERR_TIMEOUT naming the members that neither took part nor are known to have failed by the
// communicator's deadline, COMM_ERR_REMOTE when the others decided without
// this rank, COMM_ERR_BOOTSTRAP when the store is gone.
Agreement agree(Communicator& comm, std::string_view call, std::string_view purpose, uint32_t flags, bool stopOnRevoke);

}  // namespace comm::core
