#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Needs nodesOfSeveralRanks (algo/selection/registry.h): several nodes, not
// all of one rank.
void nodeLeadersAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                          comm_op_t op);

}  // namespace comm::algo
