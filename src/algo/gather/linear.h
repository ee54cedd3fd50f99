#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The gatherV contract of algo/collectives.h.
void linearGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                  int root);

}  // namespace comm::algo
