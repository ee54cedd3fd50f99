#pragma once

#include <cstddef>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The allGatherV contract of algo/collectives.h.
void recursiveDoublingAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                                const size_t* offsets);

}  // namespace comm::algo
