#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The allToAll contract of algo/collectives.h. Needs evenNodes
// (algo/selection/registry.h): L > 1 ranks on each of H > 1 nodes.
void hierarchicalAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                          const size_t* recvBytes);

}  // namespace comm::algo
