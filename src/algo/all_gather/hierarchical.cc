// Hierarchical all-gather for a communicator on H nodes of L ranks each:
//   1. across nodes, the H ranks with local rank l all-gather their blocks with the
//      flat algorithm the table picks for their bytes on H ranks;
//   2. within each node, the L ranks all-gather what each now holds (the
//      blocks of every node's rank with its local rank) the same way, over shared
//      memory.
// Phase 1 fills a buffer laid out local rank by local rank (patterns/local_rank_major.h),
// so that each local rank's blocks travel in phase 2 as one piece; when the
// caller's output is laid out so already (ranks placed round-robin) that
// is the output, else a scratch area copied out at the end.
// Only phase 1 leaves the node, and every rank of the node carries its
// share: each node sends its L blocks to each other node once, (H-1)/H of
// the output in all, whatever the placement. A flat ring sends (n-1)/n of
// it out of every node.
// Where the node's ranks may read each other's memory (Cross-Memory
// Attach, algo/blocks/node_buffers.h), phase 1 gathers straight into the output
// and phase 2 runs inside it: each rank fetches the blocks its node's
// other ranks have received from their outputs into its own, as phase 1
// hands it its own pieces, so only the last pieces' fetches come after the
// network ends, and nothing is copied twice.
// Cost (ring phases): (H-1) alpha_net + (H-1)/H N/L beta_net
// + (L-1) alpha_shm + (L-1)/L N beta_shm per rank, + a copy of N when the
// output is not local-rank-major. Read in place, the node's term overlaps the
// network's but for the last pieces' fetches, and 3 alpha_shm of
// handshakes remain.
#include "algo/all_gather/hierarchical.h"

#include <optional>
#include <vector>

#include "algo/blocks/block_messages.h"
#include "algo/blocks/node_buffers.h"
#include "algo/patterns/local_rank_major.h"
#include "algo/patterns/phase_steps.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

// Phase 1: the ranks with this rank's local rank, one per node, all-gather their
// blocks into `dest`, rank r's at `destOffsets[r]`; `onFinal` as
// flatAllGather's.
void gatherAcrossNodes(CollectiveContext& ctx, const void* in, void* dest, const size_t* bytes,
                       const size_t* destOffsets, const ChunkFn& onFinal = {}) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const std::vector<int> sameLocalRank = ranksWithLocalRank(nodes, nodes.localRank[ctx.rank()]);
  std::vector<size_t> localRankBytes, localRankOffsets;
  for (int member : sameLocalRank) {
    localRankBytes.push_back(bytes[member]);
    localRankOffsets.push_back(destOffsets[member]);
  }
  CollectiveContext::Subgroup acrossNodes(ctx, sameLocalRank, 0);
  flatAllGather(ctx, in, dest, localRankBytes.data(), localRankOffsets.data(), onFinal);
  ctx.waitAll();
}

// Phases 1 and 2 at once where the node's ranks read each other's outputs;
// false (having done nothing else) where they may not.
bool gatherReadingInPlace(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                          const size_t* offsets) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const std::vector<int>& node = nodes.members[nodes.nodeOf[rank]];
  std::optional<NodeBuffers> buffers;
  {
    // The rank with local rank p finishes the blocks of every node's rank at p.
    std::vector<NodeBuffers::Part> parts(nodes.ranksPerNode);
    for (int p = 0; p < nodes.ranksPerNode; ++p) {
      for (int member : ranksWithLocalRank(nodes, p)) parts[p].push_back({offsets[member], bytes[member]});
    }
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    buffers = NodeBuffers::exchange(ctx, in, out, std::move(parts), 0);
    if (!buffers) return false;
  }
  gatherAcrossNodes(ctx, in, out, bytes, offsets, [&](size_t offset, size_t size) {
    buffers->markFinal(offset, size);
    buffers->fetchFinished(ctx);
  });
  CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
  buffers->collect(ctx, 0);
  return true;
}

}  // namespace

void hierarchicalAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                           const size_t* offsets) {
  if (gatherReadingInPlace(ctx, in, out, bytes, offsets)) return;
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int localRank = nodes.localRank[rank];
  const LocalRankMajorLayout layout(nodes, bytes, offsets);
  char* gathered = layout.sameAs ? static_cast<char*>(out) : ctx.scratch(core::Scratch::kPhase, layout.total());
  gatherAcrossNodes(ctx, in, gathered, bytes, layout.offsets.data());
  {
    CollectiveContext::Subgroup onNode(ctx, nodes.members[nodes.nodeOf[rank]], kPhaseSteps);
    flatAllGather(ctx, gathered + layout.byLocalRank.offsets()[localRank], gathered, layout.byLocalRank.counts(),
                  layout.byLocalRank.offsets());
    ctx.waitAll();
  }
  if (!layout.sameAs) {
    for (size_t r = 0; r < layout.offsets.size(); ++r) {
      copyBlock(ctx, static_cast<char*>(out) + offsets[r], gathered + layout.offsets[r], bytes[r]);
    }
  }
}

}  // namespace comm::algo
