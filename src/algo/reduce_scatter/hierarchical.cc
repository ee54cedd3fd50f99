// Hierarchical reduce-scatter for a communicator on H nodes of L ranks each:
//   1. within each node, the L ranks reduce-scatter the whole vector with
//      the flat algorithm the table picks for N bytes on L ranks (shared
//      memory), cut by place: the rank at place l gets the node's sum of the
//      blocks of every node's rank at place l;
//   2. across nodes, the H ranks at place l reduce-scatter those blocks the
//      same way, so each gets its own block summed over every node.
// Phase 1 needs each place's blocks side by side: the input is copied into
// that order first (patterns/place_major.h), unless it is so already
// (ranks placed round-robin).
// Only phase 2 leaves the node, and every rank of the node carries its
// share: each node sends (H-1)/H of the vector out, whatever the placement.
// A flat ring sends (n-1)/n of it out of every node.
// Cost (ring phases): (L-1) alpha_shm + (L-1)/L N beta_shm + (H-1) alpha_net
// + (H-1)/H N/L beta_net per rank, + reductions of (L-1)/L N and
// (H-1)/H N/L, + a copy of N when the input is not place-major.
#include "algo/reduce_scatter/hierarchical.h"

#include <vector>

#include "algo/block_messages.h"
#include "algo/patterns/phase_steps.h"
#include "algo/patterns/place_major.h"
#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
void hierarchicalReduceScatter(CollectiveContext& ctx, const void* in, void* out, const ElementBlocks& blocks,
                               comm_dtype_t dtype, comm_op_t op) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int place = nodes.indexOnNode[rank];
  const size_t elementSize = dtypeSize(dtype);
  const PlaceMajorLayout layout(nodes, blocks.counts.data(), blocks.offsets.data());
  const std::vector<size_t> placeCounts = layout.placeSizes();
  const ElementBlocks byPlace = ElementBlocks::fromCounts(placeCounts.data(), nodes.ranksPerNode);
  // One phase area holds the input in place order (when it is not so) and
  // then this place's node sums: the flat phases may use the others.
  const size_t packedBytes = layout.sameAs ? 0 : layout.total() * elementSize;
  char* area = ctx.scratch(core::Scratch::kPhase, packedBytes + byPlace.counts[place] * elementSize);
  const void* ordered = in;
  if (!layout.sameAs) {
    for (size_t r = 0; r < layout.offsets.size(); ++r) {
      copyBlock(ctx, area + layout.offsets[r] * elementSize,
                static_cast<const char*>(in) + blocks.offsets[r] * elementSize, blocks.counts[r] * elementSize);
    }
    ordered = area;
  }
  char* nodeSums = area + packedBytes;
  {
    CollectiveContext::Subgroup onNode(ctx, nodes.members[nodes.nodeOf[rank]], 0);
    flatReduceScatter(ctx, ordered, nodeSums, byPlace, dtype, op);
    ctx.waitAll();
  }
  // Where every node's rank at this place has an empty block, so does every other rank at it.
  if (byPlace.counts[place] == 0) return;
  const std::vector<int> samePlace = ranksAtPlace(nodes, place);
  std::vector<size_t> counts;
  for (int member : samePlace) counts.push_back(blocks.counts[member]);
  CollectiveContext::Subgroup acrossNodes(ctx, samePlace, kPhaseSteps);
  flatReduceScatter(ctx, nodeSums, out, ElementBlocks::fromCounts(counts.data(), nodes.count()), dtype, op);
  // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
  ctx.waitAll();
}

}  // namespace comm::algo
