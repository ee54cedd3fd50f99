#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Needs spansNodes (algo/selection/registry.h); nodes may hold different
// numbers of ranks.
void hierarchicalReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                        comm_op_t op, int root);

// The flat algorithm for the context's current group (a subgroup's size, as
// if on one node without a board; COMM_ALGO's where it fits: chooseFlat,
// algo/selection/selection.h), run on it: each phase of the hierarchical one.
// AVG combines like SUM. Defined with the table, in reduce.cc.
void flatReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                int root);

}  // namespace comm::algo
