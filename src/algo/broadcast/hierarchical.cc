// Hierarchical broadcast for a communicator on H > 1 nodes (of any sizes):
//   1. across nodes, one leader per node (the root on its own node, the
//      node's first rank elsewhere) broadcasts with the flat algorithm the
//      table picks for N bytes on H ranks;
//   2. within each node, the leader broadcasts to the node's other ranks
//      (shared memory) the same way.
// Every node but the root's receives the message once, whatever the
// placement: the groups come from core::NodeLayout, not from rank numbers.
// A flat tree over all ranks sends it into a node once per rank of the
// node whose parent is elsewhere.
// Cost: the flat cost of N on H ranks over the network, then of N on L
// ranks in the node (binomial: ceil(log2 H) alpha_net + ceil(log2 L)
// alpha_shm + the bytes of each).
#include "algo/broadcast/hierarchical.h"

#include "algo/patterns/node_roles.h"
#include "algo/patterns/phase_steps.h"

namespace comm::algo {
void hierarchicalBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  const NodeRoles roles(ctx.communicator().nodes(), ctx.rank(), root);
  if (ctx.rank() == roles.leader) {
    CollectiveContext::Subgroup acrossNodes(ctx, roles.leaders, 0);
    flatBroadcast(ctx, buffer, bytes, roles.rootNode);
    ctx.waitAll();
  }
  if (roles.node->size() > 1) {
    CollectiveContext::Subgroup onNode(ctx, *roles.node, kPhaseSteps);
    flatBroadcast(ctx, buffer, bytes, roles.leaderLocalRank);
    // The caller may reuse `buffer` as soon as this returns, so no send may still read it.
    ctx.waitAll();
  }
}

}  // namespace comm::algo
