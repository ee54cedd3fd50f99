// Hierarchical all-reduce for a communicator on H nodes of L ranks each:
//   1. within each node, a ring reduce-scatter (shared memory) leaves the
//      rank at place l of its node with region l of the node's sum;
//   2. across nodes, the H ranks at place l all-reduce region l with the
//      flat algorithm the table picks for N/L bytes on H ranks;
//   3. within each node, every rank hands its region to the others.
// Only phase 2 leaves the node, and every rank of the node carries its 1/L
// of it, so each node's link carries 2 (H-1)/H N, whatever the placement:
// the groups come from core::NodeLayout, not from rank numbers. A flat ring
// over the same ranks carries 2 (n-1)/n N through every rank, and each rank
// whose ring neighbour is on another node sends all of it across.
//
// The phases within the node run while phase 2's messages travel. Phase 2
// cuts each region into H pieces; phase 1 runs once per piece: for the
// piece phase 2 sends first, then for the others while that one travels.
// Phase 3 hands a piece on as soon as phase 2 has finished it. Under the
// flat ring (large vectors) only the first piece's phase 1 and the last
// one's phase 3 add to the time the network takes.
// Cost (ring phases): 2 (L-1) alpha_shm + 2 (L-1)/(L H) N beta_shm
// + 2 (H-1) alpha_net + 2 (H-1)/H N/L beta_net per rank, + reductions of
// (L-1)/L N and (H-1)/H N/L.
#include "algo/all_reduce/hierarchical.h"

#include <vector>

#include "algo/all_reduce/ring.h"
#include "algo/patterns/element_blocks.h"
#include "algo/patterns/phase_steps.h"
#include "algo/patterns/place_major.h"
#include "algo/reduce_scatter/ring.h"
#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
void hierarchicalAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const std::vector<int>& node = nodes.members[nodes.nodeOf[rank]];
  const int place = nodes.indexOnNode[rank];
  const int places = nodes.ranksPerNode;
  const std::vector<int> samePlace = ranksAtPlace(nodes, place);
  const int hosts = static_cast<int>(samePlace.size());

  const size_t elementSize = dtypeSize(dtype);
  char* result = static_cast<char*>(out);
  const ElementBlocks regions = ElementBlocks::even(count, places);
  // Each region cut into the pieces of phase 2 (ring.h: its blocks).
  std::vector<ElementBlocks> pieces;
  for (int p = 0; p < places; ++p) pieces.push_back(ElementBlocks::even(regions.counts[p], hosts));
  auto pieceAt = [&](int p, int piece) { return regions.offsets[p] + pieces[p].offsets[piece]; };

  // Phase 3's messages, one per piece of every other place, find their place in `out`.
  {
    CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
    for (int p = 0; p < places; ++p) {
      for (int piece = 0; piece < hosts; ++piece) {
        const size_t bytes = pieces[p].counts[piece] * elementSize;
        if (p != place && bytes > 0) ctx.recv(p, piece, result + pieceAt(p, piece) * elementSize, bytes);
      }
    }
  }
  auto reduceOnNode = [&](int piece) {
    // The piece of every place's region: these blocks do not lie back to
    // back, which ringReduceScatter allows.
    ElementBlocks blocks;
    for (int p = 0; p < places; ++p) {
      blocks.counts.push_back(pieces[p].counts[piece]);
      blocks.offsets.push_back(pieceAt(p, piece));
    }
    blocks.offsets.push_back(pieceAt(places - 1, piece) + pieces[places - 1].counts[piece]);
    CollectiveContext::Subgroup onNode(ctx, node, piece * (places - 1));
    ringReduceScatter(ctx, in, result + pieceAt(place, piece) * elementSize, blocks, dtype, op,
                      {.landing = core::Scratch::kInnerLanding});
  };
  auto handOn = [&](int piece) {
    const size_t bytes = pieces[place].counts[piece] * elementSize;
    if (bytes == 0) return;
    CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
    for (int p = 0; p < places; ++p) {
      if (p != place) ctx.send(p, piece, result + pieceAt(place, piece) * elementSize, bytes);
    }
  };
  // All of phase 1 but the first piece runs at the ring's second call, in
  // the order the ring reads the pieces (the same on every rank of the
  // node). Run piece by piece just before the ring reads each, it would
  // hold every step of a place's ring until the node's other rings came
  // to the same step.
  const int nodeIndex = nodes.nodeOf[rank];
  int produced = 0;
  auto produce = [&](int) {
    const int upTo = produced == 0 ? 1 : hosts;
    for (; produced < upTo; ++produced) reduceOnNode(((nodeIndex - 1 - produced) % hosts + hosts) % hosts);
  };
  {
    CollectiveContext::Subgroup acrossNodes(ctx, samePlace, kPhaseSteps);
    char* region = result + regions.offsets[place] * elementSize;
    flatAllReduceByBlocks(ctx, region, region, regions.counts[place], dtype, op,
                          {.beforeReading = produce, .onFinal = handOn});
  }
  // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
  ctx.waitAll();
}

}  // namespace comm::algo
