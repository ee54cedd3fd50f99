// all_reduce for a communicator on H > 1 nodes of any sizes: the only one
// across nodes of different sizes (the hierarchical all_reduce needs equal
// ones), and across any nodes up to 256 KiB (1 MiB at 2x2), where it
// sends one network message per step per node instead of one per local rank:
//   1. within each node, the ranks reduce to the node's first rank, its
//      leader, over shared memory (the flat reduce for N bytes on L ranks);
//   2. the H leaders all-reduce their nodes' results (the flat all_reduce
//      for N bytes on H ranks);
//   3. within each node, the leader broadcasts the result (the flat
//      broadcast).
// Each node's link carries what the flat all_reduce among H ranks sends
// from one of them (2 (H-1)/H N with the ring), however many ranks the
// node holds and however they are placed; only the leader's share of the
// node's network is used.
// Cost: flat reduce and broadcast of N on L ranks, flat all_reduce of N on H.
#include "algo/all_reduce/node_leaders.h"

#include <vector>

#include "algo/all_reduce/hierarchical.h"
#include "algo/broadcast/hierarchical.h"
#include "algo/patterns/phase_steps.h"
#include "algo/reduce/hierarchical.h"
#include "common/dtype.h"
#include "core/communicator.h"

namespace comm::algo {
void nodeLeadersAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                          comm_op_t op) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const std::vector<int>& node = nodes.members[nodes.nodeOf[rank]];
  const std::vector<int> leaders = nodes.leaders();
  const bool leader = rank == node[0];
  const size_t bytes = count * dtypeSize(dtype);

  // The leader reduces its node into `out`; the others' `out` waits for phase 3.
  if (node.size() > 1) {
    CollectiveContext::Subgroup onNode(ctx, node, 0);
    flatReduce(ctx, in, leader ? out : nullptr, count, dtype, op, 0);
    ctx.waitAll();
  }
  if (leader) {
    CollectiveContext::Subgroup acrossNodes(ctx, leaders, kPhaseSteps);
    flatAllReduce(ctx, node.size() > 1 ? out : in, out, count, dtype, op);
    ctx.waitAll();
  }
  if (node.size() > 1) {
    CollectiveContext::Subgroup onNode(ctx, node, 2 * kPhaseSteps);
    flatBroadcast(ctx, out, bytes, 0);
    // The caller may divide `out` for AVG as soon as this returns, so no send may still read it.
    ctx.waitAll();
  }
}

}  // namespace comm::algo
