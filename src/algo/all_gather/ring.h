#pragma once

#include <cstddef>

#include "algo/blocks/pipeline.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The allGatherV contract of algo/collectives.h.
void ringAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets);
// The same, calling `onFinal(offset, bytes)` for each piece of `out` as it
// takes its final value: this rank's block once copied, then each chunk as
// it arrives.
void ringAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   const ChunkFn& onFinal);

}  // namespace comm::algo
