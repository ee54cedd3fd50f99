// comm::algo::allToAll: the dispatch from the selection table to an
// algorithm; all_to_all_single and all_to_all share it.
#include <numeric>

#include "algo/all_to_all/hierarchical.h"
#include "algo/all_to_all/pairwise.h"
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection/selection.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* const* send, const size_t* sendBytes, void* const* recv,
                         const size_t* recvBytes);

// Ranks may send different amounts, so each chooses by its own sizes: the
// board finds out whether everyone's fitted and, if not, every rank goes
// pairwise.
void boardOrPairwise(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                     const size_t* recvBytes) {
  if (!boardAllToAll(ctx, send, sendBytes, recv, recvBytes)) pairwiseAllToAll(ctx, send, sendBytes, recv, recvBytes);
}

constexpr Algorithm<AlgorithmFn> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its blocks on the node board if all fit, else every rank goes pairwise",
      .fits = fitsBoard},
     boardOrPairwise},
    {{.name = "hierarchical",
      .summary = "gather each node's blocks by destination node, exchange between nodes, hand out within them",
      .fits = evenNodes,
      .ordersRanksItself = true},
     hierarchicalAllToAll},
    {{.name = "pairwise", .summary = "n-1 steps, in step s send to rank+s and receive from rank-s"}, pairwiseAllToAll},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node; a rank whose blocks do not fit goes pairwise, and so do all.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Without a board only: with one (nodes faked on one host), a rank whose
    // blocks do not fit the board must still go the way of those whose do
    // (pairwise, boardOrPairwise's way out).
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks, true),
    // Every pair exchanges directly, one message each way.
    rule(kInfo, "pairwise", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllToAllSingleTable{core::CollectiveKind::kAllToAllSingle, kInfo, kRules};
extern const CollectiveTable kAllToAllTable{core::CollectiveKind::kAllToAll, kInfo, kRules};

void allToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
              const size_t* recvBytes) {
  kAlgorithms[choose(ctx, boardAllToAllBytes(ctx.size(), sendBytes))].run(ctx, send, sendBytes, recv, recvBytes);
}

}  // namespace comm::algo
