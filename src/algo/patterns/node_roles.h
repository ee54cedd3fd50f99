// Where a rank stands in a rooted collective run node by node (the
// hierarchical broadcast and reduce): its node, that node's leader (the
// root on the root's node, the first rank elsewhere) and every node's.
#pragma once

#include <algorithm>
#include <vector>

#include "core/communicator.h"

namespace comm::algo {

struct NodeRoles {
  int rootNode;                  // the root's node, and so its place among the leaders
  std::vector<int> leaders;      // one rank per node
  const std::vector<int>* node;  // this rank's node's ranks
  int leader;                    // this node's leader
  int leaderLocalRank;           // the leader's local rank in *node

  NodeRoles(const core::NodeLayout& nodes, int rank, int root)
      : rootNode(nodes.nodeOf[root]),
        leaders(nodes.leaders(root)),
        node(&nodes.members[nodes.nodeOf[rank]]),
        leader(leaders[nodes.nodeOf[rank]]),
        leaderLocalRank(static_cast<int>(std::find(node->begin(), node->end(), leader) - node->begin())) {}
};

}  // namespace comm::algo
