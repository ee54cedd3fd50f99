// How ranks started later meet the communicator that grows for them
// (comm_grow, and comm_init with COMM_JOIN=1), through the job's store.
//
// Newcomers and grows meet in order, whichever comes first: the n-th
// newcomer to arrive takes the n-th seat any grow offers. Each newcomer
// draws a ticket from one counter and writes its launch slot under it; each
// grow takes its `count` tickets from another counter, waits for their
// arrivals, and writes every ticket its seat: which grown world (its epoch,
// the prefix of that world's store keys) and which rank in it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/deadline.h"

namespace comm::core {

class World;

// Who takes a seat: enough for the others to see it die before it says
// more of itself (World::failureEvidence).
struct Occupant {
  int launchSlot = 0;  // PeerRecord::launchSlot
  pid_t pid = 0;
  std::string host;
  std::string node;  // PeerRecord::node
};

struct Seat {
  int epoch = 0;                    // the grow's number in the job
  int rank = 0;                     // in the grown world
  std::vector<Occupant> occupants;  // of every rank of the grown world
};

// The store keys of grown world `epoch` begin with this.
std::string grownWorldPrefix(int epoch);

// A newcomer's side: arrives as `self` and waits, within the deadline of
// its comm_init, for a grow to offer it a seat.
Seat awaitSeat(World& world, const Occupant& self);

// The grow's side, on one member (the others learn the epoch from it):
// takes `count` tickets, waits up to `timeout` for their newcomers, and
// seats them after `members`, the communicator's. Returns the grown world's
// epoch. On failure the tickets it took are told so, so that their
// newcomers fail at once rather than wait.
int seatNewcomers(World& world, const std::vector<Occupant>& members, int count, std::chrono::milliseconds timeout);

// Reads who takes each seat of grown world `epoch`.
std::vector<Occupant> grownWorldOccupants(World& world, int epoch);

// The ranks that grew world `epoch` agree whether each of them made its
// part and none died meanwhile, and say so to the newcomers: `failure` is
// empty when they all did, else why not, the same text on every one of them.
void settleGrownWorld(World& world, int epoch, const std::string& failure);
// A newcomer's wait, its own part of world `epoch` made, for that word;
// throws COMM_ERR_REMOTE with the why when the world is not to be used.
void awaitGrownWorldSettled(World& world, int epoch);

}  // namespace comm::core
