// A ring of `size` ranks: each rank sends to the next and receives from the
// one before, so after size - 1 steps every block has gone all the way round.
#pragma once

namespace comm::algo {

struct RingNeighbours {
  int left;   // receives from
  int right;  // sends to
};

inline RingNeighbours ringNeighbours(int rank, int size) { return {(rank + size - 1) % size, (rank + 1) % size}; }

}  // namespace comm::algo
