// comm::algo::allGatherV: the dispatch from the selection table to an
// algorithm; all_gather and all_gather_v share it and the algorithms.
#include <numeric>
#include <vector>

#include "algo/all_gather/bruck.h"
#include "algo/all_gather/hierarchical.h"
#include "algo/all_gather/recursive_doubling.h"
#include "algo/all_gather/ring.h"
#include "algo/blocks/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection/selection.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

using AlgorithmFn = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets);
using AlgorithmFnWithHooks = void(CollectiveContext&, const void* in, void* out, const size_t* bytes,
                                  const size_t* offsets, const ChunkFn& onFinal);

constexpr Algorithm<AlgorithmFn, AlgorithmFnWithHooks> kAlgorithms[] = {
    {{.name = "board",
      .summary = "every rank publishes its block on the node board and copies the others' from their entries",
      .fits = fitsBoard,
      .ordersRanksItself = true},
     boardAllGather},
    {{.name = "hierarchical",
      .summary = "gather within each node, all_gather by local rank across nodes, then share within each node",
      .fits = evenNodes,
      .ordersRanksItself = true},
     hierarchicalAllGather},
    {{.name = "recursive_doubling",
      .summary = "swap everything held with rank XOR 2^k, doubling each round (power-of-two groups)",
      .fits = powerOfTwo},
     recursiveDoublingAllGather},
    {{.name = "bruck", .summary = "recursive doubling's rounds for any group size, every range straight into place"},
     bruckAllGather},
    {{.name = "ring", .summary = "pass each block to the right neighbour, n-1 steps: fewest bytes per link"},
     ringAllGather,
     ringAllGather},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// The first rule that applies and whose algorithm fits wins
// (algo/selection/registry.h).
constexpr Rule kRules[] = {
    // No message leaves the node, one copy in and one look at each entry.
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    // Small calls, across nodes too, take the fewest rounds: they cost less
    // than the hierarchical one's phases and handshakes within each node,
    // which costs more than the twice as many bytes they send across even
    // on slow links (docs/dev/performance-history.md);
    rule(kInfo, "recursive_doubling", 4 * 1024, kAnyRanks),
    // Bruck is recursive doubling's form for any group size.
    rule(kInfo, "bruck", 4 * 1024, kAnyRanks),
    // Beyond 4 KiB across nodes the link rate decides, and the hierarchical one sends the least.
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    // While latency dominates, log2 n rounds beat the ring's n-1;
    rule(kInfo, "recursive_doubling", 256 * 1024, kAnyRanks),
    // likewise on groups that are not a power of two.
    rule(kInfo, "bruck", 256 * 1024, kAnyRanks),
    // Beyond, the ring's neighbour-only steps avoid the last rounds' far partners.
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllGatherTable{core::CollectiveKind::kAllGather, kInfo, kRules};
extern const CollectiveTable kAllGatherVTable{core::CollectiveKind::kAllGatherV, kInfo, kRules};

void flatAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   const ChunkFn& onFinal) {
  // all_gather_v's phases follow its own COMM_ALGO entry.
  const CollectiveTable& table =
      static_cast<core::CollectiveKind>(ctx.signature().kind) == core::CollectiveKind::kAllGatherV ? kAllGatherVTable
                                                                                                   : kAllGatherTable;
  const Algorithm<AlgorithmFn, AlgorithmFnWithHooks>& algorithm =
      kAlgorithms[chooseFlat(ctx, table, std::accumulate(bytes, bytes + ctx.size(), size_t{0}))];
  if (algorithm.info.takesHooks) return algorithm.runWithHooks(ctx, in, out, bytes, offsets, onFinal);
  algorithm.run(ctx, in, out, bytes, offsets);
  if (!onFinal) return;
  for (int r = 0; r < ctx.size(); ++r) {
    if (bytes[r] > 0) onFinal(offsets[r], bytes[r]);
  }
}

void allGatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  const Algorithm<AlgorithmFn, AlgorithmFnWithHooks>& algorithm =
      kAlgorithms[choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}))];
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  if (nodes.blocked || algorithm.info.ordersRanksItself) return algorithm.run(ctx, in, out, bytes, offsets);
  // Ranks placed round-robin: a flat ring in rank order would cross between
  // nodes at every step; in node order it crosses as few times as with
  // block placement (docs/algorithms.md). The blocks stay where they are.
  std::vector<size_t> nodeOrderBytes, nodeOrderOffsets;
  for (int rank : nodes.byNode) {
    nodeOrderBytes.push_back(bytes[rank]);
    nodeOrderOffsets.push_back(offsets[rank]);
  }
  CollectiveContext::Subgroup inNodeOrder(ctx, nodes.byNode, 0);
  algorithm.run(ctx, in, out, nodeOrderBytes.data(), nodeOrderOffsets.data());
}

}  // namespace comm::algo
