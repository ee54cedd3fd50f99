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
  std::vector<size_t> offsets;           // per rank: where its block starts
  std::vector<size_t> localRankOffsets;  // per local rank: where its blocks start; [ranksPerNode] is the total
  bool sameAs = true;                    // the blocks `sizes` and `given` describe already lie this way

  // `sizes` per rank, in any unit; `given` the offsets the caller's vector
  // has (the same unit).
  LocalRankMajorLayout(const core::NodeLayout& nodes, const size_t* sizes, const size_t* given)
      : offsets(nodes.nodeOf.size()), localRankOffsets(nodes.ranksPerNode + 1) {
    size_t at = 0;
    for (int localRank = 0; localRank < nodes.ranksPerNode; ++localRank) {
      localRankOffsets[localRank] = at;
      for (const std::vector<int>& node : nodes.members) {
        const int rank = node[localRank];
        offsets[rank] = at;
        sameAs = sameAs && (given[rank] == at || sizes[rank] == 0);
        at += sizes[rank];
      }
    }
    localRankOffsets[nodes.ranksPerNode] = at;
  }

  size_t total() const { return localRankOffsets.back(); }
  size_t sizeOfLocalRank(int localRank) const { return localRankOffsets[localRank + 1] - localRankOffsets[localRank]; }
  // Sizes and offsets of every local rank's blocks taken together: the blocks
  // of the phase within a node.
  std::vector<size_t> localRankSizes() const {
    std::vector<size_t> sizes(localRankOffsets.size() - 1);
    for (size_t localRank = 0; localRank < sizes.size(); ++localRank)
      sizes[localRank] = sizeOfLocalRank(static_cast<int>(localRank));
    return sizes;
  }
};

}  // namespace comm::algo
