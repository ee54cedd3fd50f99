// comm::algo::gatherV: the dispatch from the selection table to an
// algorithm; gather and gather_v share it and the algorithms, and scatter
// their table's shape (algo/selection/rooted_blocks_table.h).
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/gather/binomial.h"
#include "algo/gather/linear.h"
#include "algo/selection/rooted_blocks_table.h"

namespace comm::algo {
namespace {

constexpr RootedBlocksDirection kGather{
    .board = {boardGather, "every rank publishes its block on the node board; the root copies them out"},
    .binomial = {binomialGather, "binomial tree to the root, each subtree's blocks sent up together"},
    .linear = {linearGather, "every rank sends its block straight to the root, all at once"},
};

}  // namespace

extern const CollectiveTable kGatherTable{core::CollectiveKind::kGather, kRootedBlocksInfo<kGather>,
                                          kRootedBlocksRules<kGather>};
extern const CollectiveTable kGatherVTable{core::CollectiveKind::kGatherV, kRootedBlocksInfo<kGather>,
                                           kRootedBlocksRules<kGather>};

void gatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root) {
  runRootedBlocks<kGather>(ctx, in, out, bytes, offsets, root);
}

}  // namespace comm::algo
