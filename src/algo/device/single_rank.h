// A collective on device memory in a group of one rank exchanges nothing:
// its result is its input. It is copied on the device by the copy engines,
// never through host memory as a staged call would be.
#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::cuda {
class Staging;
}

namespace comm::algo {

using core::CollectiveContext;

// At one rank: copies `count` elements of `dtype` from device buffer `in`
// to `out` of CUDA device `device` (either may be null, or both the same:
// nothing to copy), divides them by one where `average` (AVG, as the host
// algorithms do), waits until that is done and returns true. Returns false,
// doing nothing, at more ranks. On `staging`'s stream, after the caller's
// earlier work; stream order as for every device call.
bool deviceSingleRank(CollectiveContext& ctx, cuda::Staging& staging, int device, const void* in, void* out,
                      size_t count, comm_dtype_t dtype, bool average);

}  // namespace comm::algo
