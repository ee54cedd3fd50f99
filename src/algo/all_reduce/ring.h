#pragma once

#include <cstddef>

#include "algo/blocks/pipeline.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void ringAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);
// What a caller may do while the ring runs, with byte offsets into the
// vector: fill `in` piece by piece just before the ring first reads each
// (ringReduceScatter's beforeReading, algo/reduce_scatter/ring.h), and pass
// on each piece of `out` as soon as it holds the result.
struct RingAllReduceHooks {
  ChunkFn beforeReading;
  ChunkFn onFinal;
};
void ringAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                   const RingAllReduceHooks& hooks);

}  // namespace comm::algo
