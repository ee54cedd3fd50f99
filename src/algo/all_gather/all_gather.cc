// comm::algo::allGatherV: the dispatch from the selection table to an
// algorithm; all_gather and all_gather_v share it and the algorithms.
#include <numeric>
#include <vector>

#include "algo/all_gather/bruck.h"
#include "algo/all_gather/hierarchical.h"
#include "algo/all_gather/recursive_doubling.h"
#include "algo/all_gather/ring.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/registry.h"
#include "algo/selection.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

using Run = void(CollectiveContext&, const void* in, void* out, const size_t* bytes, const size_t* offsets);

constexpr Algorithm<Run> kAlgorithms[] = {
    {{"board", fitsBoard}, boardAllGather},
    {{"hierarchical", evenNodes}, hierarchicalAllGather},
    {{"recursive_doubling", powerOfTwo}, recursiveDoublingAllGather},
    {{"bruck"}, bruckAllGather},
    {{"ring"}, ringAllGather},
};
constexpr auto kInfo = infoOf(kAlgorithms);
// Bruck is recursive doubling's form for any group size. Across nodes,
// small calls take the flat algorithms (in node order: allGatherV): fewer
// rounds than the hierarchical one's phases and handshakes within each
// node, which costs more than the twice as many bytes they send across
// even on slow links; beyond 4 KiB the link rate decides, and the
// hierarchical one sends the least (docs/dev/performance-history.md).
constexpr Rule kRules[] = {
    rule(kInfo, "board", kAnyBytes, kAnyRanks),
    rule(kInfo, "recursive_doubling", 4 * 1024, kAnyRanks),
    rule(kInfo, "bruck", 4 * 1024, kAnyRanks),
    rule(kInfo, "hierarchical", kAnyBytes, kAnyRanks),
    rule(kInfo, "recursive_doubling", 256 * 1024, kAnyRanks),
    rule(kInfo, "bruck", 256 * 1024, kAnyRanks),
    rule(kInfo, "ring", kAnyBytes, kAnyRanks),
};

}  // namespace

extern const CollectiveTable kAllGatherTable{core::CollectiveKind::kAllGather, kInfo, kRules};
extern const CollectiveTable kAllGatherVTable{core::CollectiveKind::kAllGatherV, kInfo, kRules};

void flatAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   const ChunkFn& onFinal) {
  const Situation flat{std::accumulate(bytes, bytes + ctx.size(), size_t{0}), ctx.size()};
  Run* const run = kAlgorithms[kAllGatherTable.choose(flat)].run;
  if (run == static_cast<Run*>(ringAllGather)) return ringAllGather(ctx, in, out, bytes, offsets, onFinal);
  run(ctx, in, out, bytes, offsets);
  if (!onFinal) return;
  for (int r = 0; r < ctx.size(); ++r) {
    if (bytes[r] > 0) onFinal(offsets[r], bytes[r]);
  }
}

void allGatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  int algorithm = choose(ctx, std::accumulate(bytes, bytes + ctx.size(), size_t{0}));
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  Run* const run = kAlgorithms[algorithm].run;
  // The board's slots belong to the communicator's ranks, and the
  // hierarchical algorithm orders its phases itself.
  if (nodes.blocked || run == boardAllGather || run == hierarchicalAllGather) return run(ctx, in, out, bytes, offsets);
  // Ranks placed round-robin: a flat ring in rank order would cross between
  // nodes at every step; in node order it crosses as few times as with
  // block placement (docs/algorithms.md). The blocks stay where they are.
  std::vector<size_t> nodeOrderBytes, nodeOrderOffsets;
  for (int rank : nodes.byNode) {
    nodeOrderBytes.push_back(bytes[rank]);
    nodeOrderOffsets.push_back(offsets[rank]);
  }
  CollectiveContext::Subgroup inNodeOrder(ctx, nodes.byNode, 0);
  run(ctx, in, out, nodeOrderBytes.data(), nodeOrderOffsets.data());
}

}  // namespace comm::algo
