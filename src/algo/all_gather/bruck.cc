// Bruck all-gather (any group size): in round k, with d = 2^k, a rank holding
// the blocks of ranks [rank, rank + d) sends the first min(d, n - d) of them
// to rank - d and receives as many, those of [rank + d, ...), from rank + d
// (ranks modulo n). After ceil(log2 n) rounds it holds all n. The classic
// version packs blocks in a rotated buffer and unrotates at the end; here
// they go straight to their place in the output (a range modulo n is at most
// two messages for even blocks), so there is no final copy.
// Cost: ceil(log2 n) alpha + (n-1)/n N beta.
#include "algo/all_gather/bruck.h"

#include <algorithm>
#include <vector>

#include "algo/blocks/block_messages.h"

namespace comm::algo {

void bruckAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  int n = ctx.size();
  int rank = ctx.rank();
  copyBlock(ctx, static_cast<char*>(out) + offsets[rank], in, bytes[rank]);
  std::vector<core::RequestId> received;
  for (int distance = 1, round = 0; distance < n; distance *= 2, ++round) {
    int count = std::min(distance, n - distance);
    int from = (rank + distance) % n;
    received.clear();
    recvRuns(ctx, from, round, out, bytes, offsets, from, count, received);
    sendRuns(ctx, (rank - distance + n) % n, round, out, bytes, offsets, rank, count);
    for (core::RequestId id : received) ctx.wait(id);
  }
}

}  // namespace comm::algo
