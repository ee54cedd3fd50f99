// Hierarchical reduce for a communicator on H > 1 nodes (of any sizes):
//   1. within each node, the ranks reduce to the node's leader (the root on
//      its own node, the node's first rank elsewhere) over shared memory,
//      with the flat algorithm the table picks for N bytes on L ranks;
//   2. across nodes, the leaders reduce their nodes' results to the root
//      the same way, on H ranks.
// Every node but the root's sends the vector out once (the least a reduce
// can), whatever the placement; a flat tree sends it out of a node once per
// rank whose parent is on another node.
// Cost: the flat cost of N on L ranks within nodes, then of N on H ranks
// across them.
#include "algo/reduce/hierarchical.h"

#include <algorithm>
#include <vector>

#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

// Steps of each phase start this far apart: no flat algorithm uses as many.
constexpr uint32_t kPhaseSteps = uint32_t{1} << 24;

}  // namespace

void hierarchicalReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                        comm_op_t op, int root) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int rootNode = nodes.nodeOf[root];
  const int myNode = nodes.nodeOf[rank];
  const std::vector<int>& node = nodes.members[myNode];
  const std::vector<int> leaders = nodes.leaders(root);
  const int leader = leaders[myNode];

  // What this node's leader takes across: its node's result, or its own
  // input on a node of one rank.
  const void* nodeResult = in;
  if (node.size() > 1) {
    void* partial = rank == root     ? out
                    : rank == leader ? ctx.scratch(core::Scratch::kPhase, count * dtypeSize(dtype))
                                     : nullptr;
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    const int leaderPlace = static_cast<int>(std::find(node.begin(), node.end(), leader) - node.begin());
    flatReduce(ctx, in, partial, count, dtype, op, leaderPlace);
    ctx.waitAll();
    nodeResult = partial;
  }
  if (rank == leader) {
    CollectiveContext::Subgroup acrossNodes(ctx, leaders, kPhaseSteps);
    flatReduce(ctx, nodeResult, rank == root ? out : nullptr, count, dtype, op, rootNode);
    // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
    ctx.waitAll();
  }
}

}  // namespace comm::algo
