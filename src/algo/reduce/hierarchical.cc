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

#include "algo/patterns/node_roles.h"
#include "algo/patterns/phase_steps.h"
#include "common/dtype.h"

namespace comm::algo {
void hierarchicalReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                        comm_op_t op, int root) {
  const int rank = ctx.rank();
  const NodeRoles roles(ctx.communicator().nodes(), rank, root);
  // What this node's leader takes across: its node's result, or its own
  // input on a node of one rank.
  const void* nodeResult = in;
  if (roles.node->size() > 1) {
    void* partial = rank == root           ? out
                    : rank == roles.leader ? ctx.scratch(core::Scratch::kPhase, count * dtypeSize(dtype))
                                           : nullptr;
    CollectiveContext::Subgroup onNode(ctx, *roles.node, 0);
    flatReduce(ctx, in, partial, count, dtype, op, roles.leaderLocalRank);
    ctx.waitAll();
    nodeResult = partial;
  }
  if (rank == roles.leader) {
    CollectiveContext::Subgroup acrossNodes(ctx, roles.leaders, kPhaseSteps);
    flatReduce(ctx, nodeResult, rank == root ? out : nullptr, count, dtype, op, roles.rootNode);
    // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
    ctx.waitAll();
  }
}

}  // namespace comm::algo
