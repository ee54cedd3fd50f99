// Gather and scatter (and their V forms) mirror each other: one sends every
// rank's block up to the root, the other down from it. They have the same
// three algorithms, chosen by the same rules; each direction brings its own
// functions and says in their summaries which way the blocks go.
#pragma once

#include <cstddef>
#include <numeric>

#include "algo/selection/selection.h"

namespace comm::algo {

using RootedBlocksFn = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                            int root);

struct RootedBlocksAlgorithm {
  RootedBlocksFn* run;
  const char* summary;  // comm-info --algorithms
};

// One direction's algorithms.
struct RootedBlocksDirection {
  RootedBlocksAlgorithm board;     // through the node board
  RootedBlocksAlgorithm binomial;  // a binomial tree, each subtree's blocks together
  RootedBlocksAlgorithm linear;    // every block straight between its rank and the root
};

// Variables at namespace scope rather than members of a class template:
// a member's initializer cannot read another member as a constant while
// the class is incomplete (clang).
template <const RootedBlocksDirection& kDirection>
inline constexpr Algorithm<RootedBlocksFn> kRootedBlocksAlgorithms[] = {
    {{.name = "board", .summary = kDirection.board.summary, .fits = fitsBoard}, kDirection.board.run},
    {{.name = "binomial", .summary = kDirection.binomial.summary}, kDirection.binomial.run},
    {{.name = "linear", .summary = kDirection.linear.summary}, kDirection.linear.run},
};
template <const RootedBlocksDirection& kDirection>
inline constexpr auto kRootedBlocksInfo = infoOf(kRootedBlocksAlgorithms<kDirection>);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
template <const RootedBlocksDirection& kDirection>
inline constexpr Rule kRootedBlocksRules[] = {
    // No message leaves the node: one copy in, and a look at the entries it needs.
    rule(kRootedBlocksInfo<kDirection>, "board", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 n messages at the root beat n-1.
    rule(kRootedBlocksInfo<kDirection>, "binomial", 64 * 1024, kAnyRanks),
    // Larger: no forwarding and no copies of subtrees.
    rule(kRootedBlocksInfo<kDirection>, "linear", kAnyBytes, kAnyRanks),
};

// Chooses by the blocks' total and runs the choice.
template <const RootedBlocksDirection& kDirection>
void runRootedBlocks(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                     int root) {
  const int algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  kRootedBlocksAlgorithms<kDirection>[algorithm].run(ctx, in, out, bytes, offsets, root);
}

}  // namespace comm::algo
