// The messages of the fold (algo/patterns/fold.h): an even rank of a pair
// hands its vector over and gets its result back; the odd rank combines.
#pragma once

#include <cstdint>

#include "algo/patterns/fold.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// The even rank of a pair: send `in` to the partner under `foldStep`, then
// receive this rank's result (one message of `resultBytes`) under
// `unfoldStep`. `result` may overlap `in`.
void handOver(CollectiveContext& ctx, const Fold& fold, const void* in, size_t inBytes, void* result,
              size_t resultBytes, uint32_t foldStep, uint32_t unfoldStep);

// The odd rank of a pair: acc = op(partner's vector, in), `count` elements,
// reducing each chunk as it arrives under `foldStep`. `acc` may be `in`.
void combineFolded(CollectiveContext& ctx, const Fold& fold, const void* in, void* acc, size_t count,
                   comm_dtype_t dtype, comm_op_t op, uint32_t foldStep);

// The way into the fold of an all_reduce of `count` elements, for every
// rank: the even rank of a pair hands `in` over and receives the result in
// `out`, and is then done (true); the odd one combines its partner's vector
// with `in` into `out`. A participant (false) finds its vector in `out` when
// it carries a partner, and in `in` otherwise.
bool enterAllReduceFold(CollectiveContext& ctx, const Fold& fold, const void* in, void* out, size_t count,
                        comm_dtype_t dtype, comm_op_t op, uint32_t foldStep, uint32_t unfoldStep);

}  // namespace comm::algo
