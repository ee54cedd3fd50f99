// Which algorithm runs a collective: the one COMM_ALGO names for it
// ("all_reduce:ring,broadcast:binomial") where that algorithm fits the call,
// else the first rule of the collective's table (algo/registry.h) that
// applies. Every new choice is logged at debug level; a communicator
// remembers each collective's last one, which steady traffic asks for again.
#pragma once

#include <cstddef>

#include "core/collective_context.h"
#include "core/communicator.h"

namespace comm::algo {

using core::CollectiveContext;

// The index, in the table of the context's collective, of the algorithm for
// this call. `bytes` is the collective's message size as the collective
// defines it (all_reduce: the vector; all_gather: the whole output). Throws
// INVALID_ARGUMENT when COMM_ALGO names an algorithm the collective lacks.
int decide(CollectiveContext& ctx, size_t bytes);

// decide(), remembered per communicator and kind: steady traffic asks again
// for the size it asked for last, and this path stays a few instructions
// (a small collective's whole call on the node board is a few hundred).
inline int choose(CollectiveContext& ctx, size_t bytes) {
  core::CollectiveBuffers::Choice& last = ctx.communicator().collectiveBuffers().lastChoice[ctx.signature().kind];
  if (last.bytes != bytes) [[unlikely]]
    last = {bytes, decide(ctx, bytes)};
  return last.algorithm;
}

}  // namespace comm::algo
