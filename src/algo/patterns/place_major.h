// The per-rank blocks of a vector (one block per rank, as all_gather's
// output and reduce_scatter's input) arranged place by place: first the
// blocks of the ranks at place 0 of every node, node by node, then those at
// place 1, and so on. The hierarchical all_gather and reduce_scatter need
// it: the phase across nodes moves the blocks of one place, and the phase
// within a node then moves each place's blocks as one contiguous piece.
// Needs nodes of equal sizes (NodeLayout::ranksPerNode > 0).
#pragma once

#include <cstddef>
#include <vector>

#include "core/communicator.h"

namespace comm::algo {

// The ranks at `place` of every node, node by node: the group of the phase
// across nodes.
inline std::vector<int> ranksAtPlace(const core::NodeLayout& nodes, int place) {
  std::vector<int> ranks;
  ranks.reserve(nodes.members.size());
  for (const std::vector<int>& node : nodes.members) ranks.push_back(node[place]);
  return ranks;
}

struct PlaceMajorLayout {
  std::vector<size_t> offsets;       // per rank: where its block starts
  std::vector<size_t> placeOffsets;  // per place: where its blocks start; [places] is the total
  bool sameAs = true;                // the blocks `sizes` and `given` describe already lie this way

  // `sizes` per rank, in any unit; `given` the offsets the caller's vector
  // has (the same unit).
  PlaceMajorLayout(const core::NodeLayout& nodes, const size_t* sizes, const size_t* given)
      : offsets(nodes.nodeOf.size()), placeOffsets(nodes.ranksPerNode + 1) {
    size_t at = 0;
    for (int place = 0; place < nodes.ranksPerNode; ++place) {
      placeOffsets[place] = at;
      for (const std::vector<int>& node : nodes.members) {
        const int rank = node[place];
        offsets[rank] = at;
        sameAs = sameAs && (given[rank] == at || sizes[rank] == 0);
        at += sizes[rank];
      }
    }
    placeOffsets[nodes.ranksPerNode] = at;
  }

  size_t total() const { return placeOffsets.back(); }
  size_t sizeOfPlace(int place) const { return placeOffsets[place + 1] - placeOffsets[place]; }
  // Sizes and offsets of every place's blocks taken together: the blocks
  // of the phase within a node.
  std::vector<size_t> placeSizes() const {
    std::vector<size_t> sizes(placeOffsets.size() - 1);
    for (size_t place = 0; place < sizes.size(); ++place) sizes[place] = sizeOfPlace(static_cast<int>(place));
    return sizes;
  }
};

}  // namespace comm::algo
