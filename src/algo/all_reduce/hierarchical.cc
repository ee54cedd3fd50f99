// Hierarchical all-reduce for a communicator on H nodes of L ranks each:
//   1. within each node, a ring reduce-scatter (shared memory) leaves the
//      rank at place l of its node with block l of the node's sum;
//   2. across nodes, the H ranks at place l all-reduce block l with the flat
//      algorithm the table picks for N/L bytes on H ranks;
//   3. within each node, a ring all-gather hands every rank all L blocks.
// Only phase 2 leaves the node, and every rank of the node carries its 1/L
// of it, so each node's link carries 2 (H-1)/H N, whatever the placement:
// the groups come from core::NodeLayout, not from rank numbers. A flat ring
// over the same ranks carries 2 (n-1)/n N through every rank, and each rank
// whose ring neighbour is on another node sends all of it across.
// Cost (ring phases): 2 (L-1) alpha_shm + 2 (L-1)/L N beta_shm
// + 2 (H-1) alpha_net + 2 (H-1)/H N/L beta_net per rank, + reductions of
// (L-1)/L N and (H-1)/H N/L.
#include "algo/all_reduce/hierarchical.h"

#include <vector>

#include "algo/all_gather/ring.h"
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
  const std::vector<int> samePlace = ranksAtPlace(nodes, place);

  const size_t elementSize = dtypeSize(dtype);
  const ElementBlocks blocks = ElementBlocks::even(count, nodes.ranksPerNode);
  char* mine = static_cast<char*>(out) + blocks.offsets[place] * elementSize;
  {
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    ringReduceScatter(ctx, in, mine, blocks, dtype, op, 0);
    // The next phases reuse the scratch the forwarding steps may still send from.
    ctx.waitAll();
  }
  {
    CollectiveContext::Subgroup acrossNodes(ctx, samePlace, kPhaseSteps);
    // Below L elements some places hold nothing, on every node alike.
    if (blocks.counts[place] > 0) flatAllReduce(ctx, mine, mine, blocks.counts[place], dtype, op);
    ctx.waitAll();
  }
  std::vector<size_t> bytes(blocks.counts.size());
  std::vector<size_t> offsets(blocks.counts.size());
  for (size_t b = 0; b < bytes.size(); ++b) {
    bytes[b] = blocks.counts[b] * elementSize;
    offsets[b] = blocks.offsets[b] * elementSize;
  }
  CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
  ringAllGather(ctx, mine, out, bytes.data(), offsets.data());
  // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
  ctx.waitAll();
}

}  // namespace comm::algo
