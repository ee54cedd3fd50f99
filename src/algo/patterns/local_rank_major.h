// The per-rank blocks of a vector (one block per rank, as all_gather's
// output and reduce_scatter's input) arranged local rank by local rank: first the
// blocks of the ranks with local rank 0 of every node, node by node, then those with
// local rank 1, and so on. The hierarchical all_gather and reduce_scatter need
// it: the phase across nodes moves the blocks of one local rank, and the phase
// within a node then moves each local rank's blocks as one contiguous piece.
// Needs nodes of equal sizes (NodeLayout::ranksPerNode > 0).
#pragma once

#include <cstddef>
#include <vector>

#include "algo/patterns/blocks.h"
#include "core/communicator.h"

namespace comm::algo {

// The ranks with local rank `localRank` of every node, node by node: the group of the phase
// across nodes.
inline std::vector<int> ranksWithLocalRank(const core::NodeLayout& nodes, int localRank) {
  std::vector<int> ranks;
  ranks.reserve(nodes.members.size());
  for (const std::vector<int>& node : nodes.members) ranks.push_back(node[localRank]);
  return ranks;
}

struct LocalRankMajorLayout {
  std::vector<size_t> offsets;  // per rank: where its block starts
  // Per local rank, its blocks taken together, back to back: the blocks of
  // the phase within a node.
  Blocks byLocalRank;
  bool sameAs = true;  // the blocks `sizes` and `given` describe already lie this way

  // `sizes` per rank, in any unit; `given` the offsets the caller's vector
  // has (the same unit).
  LocalRankMajorLayout(const core::NodeLayout& nodes, const size_t* sizes, const size_t* given)
      : offsets(nodes.nodeOf.size()), byLocalRank(nodes.ranksPerNode) {
    size_t at = 0;
    for (int localRank = 0; localRank < nodes.ranksPerNode; ++localRank) {
      const size_t start = at;
      for (const std::vector<int>& node : nodes.members) {
        const int rank = node[localRank];
        offsets[rank] = at;
        sameAs = sameAs && (given[rank] == at || sizes[rank] == 0);
        at += sizes[rank];
      }
      byLocalRank.append(at - start);
    }
  }

  size_t total() const { return byLocalRank.total(); }
};

}  // namespace comm::algo
