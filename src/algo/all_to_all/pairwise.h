#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The allToAll contract of algo/collectives.h.
void pairwiseAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                      const size_t* recvBytes);

}  // namespace comm::algo
