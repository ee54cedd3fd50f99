#pragma once

#include <cstdint>

#include "algo/blocks/fold_exchange.h"
#include "algo/patterns/blocks.h"
#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

// Recursive halving among the participants of `fold` (this rank must be
// one): `src` is this participant's whole vector cut into `blocks`, one per
// participant. On return `mine` holds op over every participant of block
// fold.newRank(); it may be exactly src's block. Uses steps
// [stepBase, stepBase + log2 participants).
void recursiveHalving(CollectiveContext& ctx, const Fold& fold, const void* src, void* mine, const Blocks& blocks,
                      comm_dtype_t dtype, comm_op_t op, uint32_t stepBase);

// reduceScatterV by recursive halving, folding non-power-of-two groups.
void recursiveHalvingReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks,
                                   comm_dtype_t dtype, comm_op_t op);

}  // namespace comm::algo
