// Which algorithm runs a collective: the first row of the selection table
// matching (collective, message bytes, group size), unless COMM_ALGO names
// one for that collective ("all_reduce:ring,broadcast:binomial"). Every
// choice is logged at debug level.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

struct Rule {
  core::CollectiveKind kind;
  size_t maxBytes;     // the rule applies to messages of at most this many bytes
  int maxRanks;        // ... and groups of at most this many ranks
  std::string_view algorithm;
};

// The table, in matching order; comm-info prints it.
std::span<const Rule> selectionTable();

// The algorithms a collective has (for COMM_ALGO validation and comm-info).
std::span<const char* const> algorithmsOf(core::CollectiveKind kind);

// Pick the algorithm for this call. `bytes` is the collective's message size
// as the collective defines it (all_reduce: the vector; all_gather: the whole
// output). Throws INVALID_ARGUMENT when COMM_ALGO names an unknown algorithm.
std::string_view choose(CollectiveContext& ctx, size_t bytes);

}  // namespace comm::algo
