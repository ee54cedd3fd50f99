// comm::algo::scatterV: the dispatch from the selection table to an
// algorithm; scatter and scatter_v share it and the algorithms, and gather
// their table's shape (algo/selection/rooted_blocks_table.h).
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/scatter/binomial.h"
#include "algo/scatter/linear.h"
#include "algo/selection/rooted_blocks_table.h"

namespace comm::algo {
namespace {

constexpr RootedBlocksDirection kScatter{
    .board = {boardScatter, "the root publishes every block on the node board; each rank copies its own"},
    .binomial = {binomialScatter, "binomial tree from the root, each subtree's blocks sent down together"},
    .linear = {linearScatter, "the root sends every rank its block straight, all at once"},
};

}  // namespace

extern const CollectiveTable kScatterTable{core::CollectiveKind::kScatter, kRootedBlocksInfo<kScatter>,
                                           kRootedBlocksRules<kScatter>};
extern const CollectiveTable kScatterVTable{core::CollectiveKind::kScatterV, kRootedBlocksInfo<kScatter>,
                                            kRootedBlocksRules<kScatter>};

void scatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root) {
  runRootedBlocks<kScatter>(ctx, in, out, bytes, offsets, root);
}

}  // namespace comm::algo
