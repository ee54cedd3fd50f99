#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void scatterAllGatherBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root);

}  // namespace comm::algo
