// Hierarchical reduce-scatter for a communicator on H nodes of L ranks each:
//   1. within each node, the L ranks reduce-scatter the whole vector with
//      the flat algorithm the table picks for N bytes on L ranks (shared
//      memory), cut by local rank: the rank with local rank l gets the node's sum of the
//      blocks of every node's rank with local rank l;
//   2. across nodes, the H ranks with local rank l reduce-scatter those blocks the
//      same way, so each gets its own block summed over every node.
// Phase 1 needs each local rank's blocks side by side: the input is copied into
// that order first (patterns/local_rank_major.h), unless it is so already
// (ranks placed round-robin).
// Only phase 2 leaves the node, and every rank of the node carries its
// share: each node sends (H-1)/H of the vector out, whatever the placement.
// A flat ring sends (n-1)/n of it out of every node.
// Where the node's ranks may read each other's memory (Cross-Memory
// Attach, algo/blocks/node_buffers.h), phase 1 runs inside phase 2 instead: the
// rank with local rank l combines each piece of its node sums from the node's
// inputs, where they lie, just before phase 2 first reads it, so the
// network starts after one piece and the input is never reordered.
// Cost (ring phases): (L-1) alpha_shm + (L-1)/L N beta_shm + (H-1) alpha_net
// + (H-1)/H N/L beta_net per rank, + reductions of (L-1)/L N and
// (H-1)/H N/L, + a copy of N when the input is not local-rank-major. Read in
// place, the node's term overlaps the network's but for the first piece's
// combination, and 2 alpha_shm of handshakes remain.
#include "algo/reduce_scatter/hierarchical.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "algo/blocks/block_messages.h"
#include "algo/blocks/node_buffers.h"
#include "algo/patterns/local_rank_major.h"
#include "algo/patterns/phase_steps.h"
#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

// The blocks of the ranks `sameLocalRank` (one per node), back to back.
Blocks blocksOf(const std::vector<int>& sameLocalRank, const Blocks& blocks) {
  Blocks of(static_cast<int>(sameLocalRank.size()));
  for (int member : sameLocalRank) of.append(blocks.counts()[member]);
  return of;
}

// Phases 1 and 2 at once where the node's ranks read each other's inputs;
// false (having done nothing else) where they may not.
bool reduceScatterReadingInPlace(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks,
                                 comm_dtype_t dtype, comm_op_t op) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const std::vector<int>& node = nodes.members[nodes.nodeOf[rank]];
  const size_t elementSize = dtypeSize(dtype);
  std::optional<NodeBuffers> buffers;
  {
    // Only inputs are read: nobody finishes a part of another's output.
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    buffers = NodeBuffers::exchange(ctx, in, out, std::vector<NodeBuffers::Part>(nodes.ranksPerNode), 0);
    if (!buffers) return false;
  }
  const std::vector<int> sameLocalRank = ranksWithLocalRank(nodes, nodes.localRank[rank]);
  const Blocks localRankBlocks = blocksOf(sameLocalRank, blocks);
  // Where every node's rank with this local rank has an empty block, so does every other rank at it.
  if (localRankBlocks.total() > 0) {
    // The node sums of this local rank's blocks, back to back, each combined as phase 2 first reads it.
    char* nodeSums = ctx.scratch(core::Scratch::kPhase, localRankBlocks.total() * elementSize);
    CollectiveContext::Subgroup acrossNodes(ctx, sameLocalRank, kPhaseSteps);
    flatReduceScatter(ctx, nodeSums, out, localRankBlocks, dtype, op, [&](size_t offset, size_t bytes) {
      for (size_t i = 0; i < sameLocalRank.size() && bytes > 0; ++i) {
        const size_t start = localRankBlocks.offsets()[i] * elementSize;
        const size_t end = start + localRankBlocks.counts()[i] * elementSize;
        if (offset >= end) continue;
        const size_t piece = std::min(bytes, end - offset);
        buffers->combine(ctx, blocks.offsets()[sameLocalRank[i]] * elementSize + (offset - start), piece,
                         nodeSums + offset, dtype, op);
        offset += piece;
        bytes -= piece;
      }
    });
    ctx.waitAll();
  }
  CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
  buffers->collect(ctx, 0);
  return true;
}

}  // namespace

void hierarchicalReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks,
                               comm_dtype_t dtype, comm_op_t op) {
  if (reduceScatterReadingInPlace(ctx, in, out, blocks, dtype, op)) return;
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int localRank = nodes.localRank[rank];
  const size_t elementSize = dtypeSize(dtype);
  const LocalRankMajorLayout layout(nodes, blocks.counts(), blocks.offsets());
  const Blocks& byLocalRank = layout.byLocalRank;
  // One phase area holds the input in place order (when it is not so) and
  // then this local rank's node sums: the flat phases may use the others.
  const size_t packedBytes = layout.sameAs ? 0 : layout.total() * elementSize;
  char* area = ctx.scratch(core::Scratch::kPhase, packedBytes + byLocalRank.counts()[localRank] * elementSize);
  const void* ordered = in;
  if (!layout.sameAs) {
    for (size_t r = 0; r < layout.offsets.size(); ++r) {
      copyBlock(ctx, area + layout.offsets[r] * elementSize,
                static_cast<const char*>(in) + blocks.offsets()[r] * elementSize, blocks.counts()[r] * elementSize);
    }
    ordered = area;
  }
  char* nodeSums = area + packedBytes;
  {
    // Step 0 carried the buffers' exchange.
    CollectiveContext::Subgroup onNode(ctx, nodes.members[nodes.nodeOf[rank]], 1);
    flatReduceScatter(ctx, ordered, nodeSums, byLocalRank, dtype, op);
    ctx.waitAll();
  }
  // Where every node's rank with this local rank has an empty block, so does every other rank at it.
  if (byLocalRank.counts()[localRank] == 0) return;
  const std::vector<int> sameLocalRank = ranksWithLocalRank(nodes, localRank);
  CollectiveContext::Subgroup acrossNodes(ctx, sameLocalRank, kPhaseSteps);
  flatReduceScatter(ctx, nodeSums, out, blocksOf(sameLocalRank, blocks), dtype, op);
  // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
  ctx.waitAll();
}

}  // namespace comm::algo
