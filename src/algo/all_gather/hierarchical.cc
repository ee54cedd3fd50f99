// Hierarchical all-gather for a communicator on H nodes of L ranks each:
//   1. across nodes, the H ranks at place l all-gather their blocks with the
//      flat algorithm the table picks for their bytes on H ranks;
//   2. within each node, the L ranks all-gather what each now holds (the
//      blocks of every node's rank at its place) the same way, over shared
//      memory.
// Phase 1 fills a buffer laid out place by place (patterns/place_major.h),
// so that each place's blocks travel in phase 2 as one piece; when the
// caller's output is laid out so already (ranks placed round-robin) that
// is the output, else a scratch area copied out at the end.
// Only phase 1 leaves the node, and every rank of the node carries its
// share: each node sends its L blocks to each other node once, (H-1)/H of
// the output in all, whatever the placement. A flat ring sends (n-1)/n of
// it out of every node.
// Cost (ring phases): (H-1) alpha_net + (H-1)/H N/L beta_net
// + (L-1) alpha_shm + (L-1)/L N beta_shm per rank, + a copy of N when the
// output is not place-major.
#include "algo/all_gather/hierarchical.h"

#include <vector>

#include "algo/block_messages.h"
#include "algo/patterns/phase_steps.h"
#include "algo/patterns/place_major.h"
#include "core/communicator.h"

namespace comm::algo {
void hierarchicalAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                           const size_t* offsets) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int place = nodes.indexOnNode[rank];
  const PlaceMajorLayout layout(nodes, bytes, offsets);
  char* gathered = layout.sameAs ? static_cast<char*>(out) : ctx.scratch(core::Scratch::kPhase, layout.total());
  {
    const std::vector<int> samePlace = ranksAtPlace(nodes, place);
    std::vector<size_t> placeBytes, placeOffsets;
    for (int member : samePlace) {
      placeBytes.push_back(bytes[member]);
      placeOffsets.push_back(layout.offsets[member]);
    }
    CollectiveContext::Subgroup acrossNodes(ctx, samePlace, 0);
    flatAllGather(ctx, in, gathered, placeBytes.data(), placeOffsets.data());
    ctx.waitAll();
  }
  {
    const std::vector<size_t> nodeBytes = layout.placeSizes();
    CollectiveContext::Subgroup onNode(ctx, nodes.members[nodes.nodeOf[rank]], kPhaseSteps);
    flatAllGather(ctx, gathered + layout.placeOffsets[place], gathered, nodeBytes.data(), layout.placeOffsets.data());
    ctx.waitAll();
  }
  if (!layout.sameAs) {
    for (size_t r = 0; r < layout.offsets.size(); ++r) {
      copyBlock(ctx, static_cast<char*>(out) + offsets[r], gathered + layout.offsets[r], bytes[r]);
    }
  }
}

}  // namespace comm::algo
