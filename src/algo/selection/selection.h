// Which algorithm runs a collective: the one COMM_ALGO names for it
// ("all_reduce:ring,broadcast:binomial") where that algorithm fits the call,
// else the first rule of the collective's table (algo/selection/registry.h)
// that applies. That one rule (selectAlgorithm) chooses both a whole call
// (choose) and the flat phase a hierarchical algorithm runs over a subgroup
// (chooseFlat). Every new choice of a whole call is logged at debug level; a
// communicator remembers each collective's last one, which steady traffic
// asks for again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "algo/selection/registry.h"
#include "core/collective_context.h"
#include "core/communicator.h"

namespace comm::algo {

using core::CollectiveContext;

// The algorithm COMM_ALGO forces (`forced`, "" for none) where it fits the
// situation, else the table's choice. Throws INVALID_ARGUMENT when `forced`
// names an algorithm the table lacks.
int selectAlgorithm(const CollectiveTable& table, const Situation& situation, std::string_view forced);

// The situation of a phase that runs a collective flat over `ranks`: as if
// on one node without a board (the phase's group is one rank per node, or
// one node's ranks).
constexpr Situation flatSituation(size_t bytes, int ranks) { return {bytes, ranks}; }

// The algorithm of `table` (its collective's COMM_ALGO entry honoured) for
// a flat phase over the context's current group. Not remembered: a call's
// phases alternate between groups and sizes and would evict the whole
// call's choice from the SelectionCache, and the rules are a few
// comparisons.
int chooseFlat(CollectiveContext& ctx, const CollectiveTable& table, size_t bytes);

// The index, in the table of the context's collective, of the algorithm for
// this call. `bytes` is the collective's message size as the collective
// defines it (all_reduce: the vector; all_gather: the whole output). Throws
// INVALID_ARGUMENT when COMM_ALGO names an algorithm the collective lacks.
int decide(CollectiveContext& ctx, size_t bytes);

// The algorithm each kind of collective took last on a communicator, for
// how many bytes (an index into the collective's table).
struct SelectionCache {
  struct Choice {
    size_t bytes = SIZE_MAX;  // none yet
    int algorithm = -1;
  };
  std::array<Choice, core::kCollectiveKinds> last;
};

// decide(), remembered per communicator and kind: steady traffic asks again
// for the size it asked for last, and this path stays a few instructions
// (a small collective's whole call on the node board is a few hundred).
inline int choose(CollectiveContext& ctx, size_t bytes) {
  std::shared_ptr<void>& state = ctx.communicator().collectiveBuffers().algorithmState;
  if (!state) [[unlikely]]
    state = std::make_shared<SelectionCache>();
  SelectionCache::Choice& last = static_cast<SelectionCache*>(state.get())->last[ctx.signature().kind];
  if (last.bytes != bytes) [[unlikely]]
    last = {bytes, decide(ctx, bytes)};
  return last.algorithm;
}

}  // namespace comm::algo
