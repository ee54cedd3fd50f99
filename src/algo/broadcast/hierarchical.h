#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Needs spansNodes (algo/selection/registry.h); nodes may hold different
// numbers of ranks.
void hierarchicalBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root);

// The flat algorithm for the context's current group (a subgroup's size, as
// if on one node without a board; COMM_ALGO's where it fits: chooseFlat,
// algo/selection/selection.h), run on it: each phase of the hierarchical one.
// Defined with the table, in broadcast.cc.
void flatBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root);

}  // namespace comm::algo
