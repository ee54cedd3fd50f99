// Which algorithm runs a collective: the first row of the selection table
// matching (collective, message bytes, group size), unless COMM_ALGO names
// one for that collective ("all_reduce:ring,broadcast:binomial"). Every
// new choice is logged at debug level; a communicator remembers each
// collective's last one, which steady traffic asks for again.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "core/collective_context.h"
#include "core/communicator.h"

namespace comm::algo {

using core::CollectiveContext;

struct Rule {
  core::CollectiveKind kind;
  size_t maxBytes;     // the rule applies to messages of at most this many bytes
  int maxRanks;        // ... and groups of at most this many ranks
  std::string_view algorithm;
  // The rule applies only on communicators without a node board, whose
  // messages go over a network transport (or libfabric's shm).
  bool withoutBoard = false;
};

// The table, in matching order; comm-info prints it.
std::span<const Rule> selectionTable();

// The algorithms a collective has (for COMM_ALGO validation and comm-info).
std::span<const char* const> algorithmsOf(core::CollectiveKind kind);

// The algorithm for this call, found in the table (or COMM_ALGO). `bytes` is
// the collective's message size as the collective defines it (all_reduce:
// the vector; all_gather: the whole output). Throws INVALID_ARGUMENT when
// COMM_ALGO names an unknown algorithm.
std::string_view decide(CollectiveContext& ctx, size_t bytes);

// decide(), remembered per communicator and kind: steady traffic asks again
// for the size it asked for last, and this path stays a few instructions
// (a small collective's whole call on the node board is a few hundred).
inline std::string_view choose(CollectiveContext& ctx, size_t bytes) {
  core::CollectiveBuffers::Choice& last = ctx.communicator().collectiveBuffers().lastChoice[ctx.signature().kind];
  if (last.bytes != bytes) [[unlikely]] last = {bytes, decide(ctx, bytes)};
  return last.algorithm;
}

}  // namespace comm::algo
