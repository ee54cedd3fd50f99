// Hierarchical all-reduce for a communicator on H nodes of L ranks each:
//   1. within each node, the rank with local rank l combines region l of the
//      node's inputs;
//   2. across nodes, the H ranks with local rank l all-reduce region l with the
//      flat algorithm the table picks for N/L bytes on H ranks;
//   3. within each node, every rank hands its region to the others.
// Only phase 2 leaves the node, and every rank of the node carries its 1/L
// of it, so each node's link carries 2 (H-1)/H N, whatever the placement:
// the groups come from core::NodeLayout, not from rank numbers. A flat ring
// over the same ranks carries 2 (n-1)/n N through every rank, and each rank
// whose ring neighbour is on another node sends all of it across.
// Where the node's ranks may read each other's memory (Cross-Memory
// Attach, algo/blocks/node_buffers.h), phases 1 and 3 read the other ranks'
// buffers in place, piece by piece inside phase 2: only the first piece's
// combination comes before the network starts and only the last pieces'
// fetches after it ends. Elsewhere they are a ring reduce-scatter and a
// ring all-gather through shared memory, before and after phase 2.
// Cost (ring phases): 2 (L-1) alpha_shm + 2 (L-1)/L N beta_shm
// + 2 (H-1) alpha_net + 2 (H-1)/H N/L beta_net per rank, + reductions of
// (L-1)/L N and (H-1)/H N/L. Read in place, the node's terms overlap the
// network's but for the first piece's combination and the last pieces'
// fetches, and 3 alpha_shm of handshakes remain.
#include "algo/all_reduce/hierarchical.h"

#include <optional>
#include <vector>

#include "algo/all_gather/ring.h"
#include "algo/blocks/node_buffers.h"
#include "algo/patterns/blocks.h"
#include "algo/patterns/local_rank_major.h"
#include "algo/patterns/phase_steps.h"
#include "algo/reduce_scatter/ring.h"
#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
void hierarchicalAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const std::vector<int>& node = nodes.members[nodes.nodeOf[rank]];
  const int localRank = nodes.localRank[rank];
  const std::vector<int> sameLocalRank = ranksWithLocalRank(nodes, localRank);

  const size_t elementSize = dtypeSize(dtype);
  const Blocks blocks = Blocks::even(count, nodes.ranksPerNode);
  const size_t regionOffset = blocks.offsets()[localRank] * elementSize;
  char* mine = static_cast<char*>(out) + regionOffset;
  std::optional<NodeBuffers> buffers;
  {
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    std::vector<NodeBuffers::Part> regions;
    for (int p = 0; p < nodes.ranksPerNode; ++p) {
      regions.push_back({{blocks.offsets()[p] * elementSize, blocks.counts()[p] * elementSize}});
    }
    buffers = NodeBuffers::exchange(ctx, in, out, std::move(regions), 0);
    if (!buffers) {
      ringReduceScatter(ctx, in, mine, blocks, dtype, op, 1);
      // The next phases reuse the scratch the forwarding steps may still send from.
      ctx.waitAll();
    }
  }
  {
    CollectiveContext::Subgroup acrossNodes(ctx, sameLocalRank, kPhaseSteps);
    // Where the node's ranks may read each other's memory, phases 1 and 3
    // run inside phase 2, piece by piece: a piece is combined from the
    // node's inputs as phase 2 first reads it, and the pieces the node's
    // other ranks have finished are fetched each time phase 2 finishes one
    // of this rank's. The first piece leaves for the network at once, and
    // the node's work is done while the network carries what went before.
    RingAllReduceHooks hooks;
    if (buffers) {
      hooks.beforeReading = [&](size_t offset, size_t bytes) {
        buffers->combine(ctx, regionOffset + offset, bytes, mine + offset, dtype, op);
      };
      hooks.onFinal = [&](size_t offset, size_t bytes) {
        buffers->markFinal(regionOffset + offset, bytes);
        buffers->fetchFinished(ctx);
      };
    }
    // Below L elements some local ranks hold nothing, on every node alike.
    if (blocks.counts()[localRank] > 0) flatAllReduce(ctx, mine, mine, blocks.counts()[localRank], dtype, op, hooks);
    ctx.waitAll();
  }
  CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
  if (buffers) {
    buffers->collect(ctx, 0);
    return;
  }
  const Blocks inBytes = blocks.scaled(elementSize);
  ringAllGather(ctx, mine, out, inBytes.counts(), inBytes.offsets());
  // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
  ctx.waitAll();
}

}  // namespace comm::algo
