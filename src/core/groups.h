// Where communicators come from: the world's own (every rank), and those
// made from a parent's ranks, an explicit group or a split by colour and key.
// The latter are collective over the ranks that take part and need no
// messages: the members agree through the world's store.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/communicator.h"

namespace comm::core {

class World;

// The communicator of every rank of `world`, in world rank order (id 0).
std::shared_ptr<Communicator> worldCommunicator(const std::shared_ptr<World>& world, std::string name = "world");

// The communicator of `members` (parent ranks, in the new communicator's
// rank order, distinct, this rank among them); called by every member.
// `name` may be null (then "group-ID").
std::shared_ptr<Communicator> createGroup(Communicator& parent, const std::vector<int>& members, const char* name);

// MPI_Comm_split: called by every rank of `parent`; the ranks that chose the
// same `color` form a communicator ordered by `key` (ties by parent rank).
// A negative colour (COMM_UNDEFINED) takes part and gets null.
std::shared_ptr<Communicator> split(Communicator& parent, int color, int key, const char* name);

// comm_shrink: called by every live rank of `parent`; they agree on which
// members failed (core/agreement.h) and make a communicator of the others,
// in parent rank order. `name` may be null (then "<parent>-shrunk").
std::shared_ptr<Communicator> shrink(Communicator& parent, const char* name);

// comm_grow: called by every member of `parent`, each with the same
// `count` (1..65535); `count` ranks started with COMM_JOIN=1 join them
// (core/grow_seats.h). The result is the world of the members, in parent
// rank order, then the newcomers in the order they arrived: a world of its
// own (World::createGrown), made like comm_init's, so a death while it is
// made fails it on every rank within the deadline. `name` may be null
// (then "<parent>-grown").
std::shared_ptr<Communicator> grow(Communicator& parent, int count, const char* name);

}  // namespace comm::core
