// Recursive-doubling all-gather (power-of-two groups): in round k every rank
// swaps everything it holds -- the blocks of its aligned group of 2^k ranks --
// with rank XOR 2^k, so the blocks held double each round. Blocks go straight
// into place in the output; an aligned group is a contiguous range of ranks,
// one message for even blocks.
// Cost: log2(n) alpha + (n-1)/n N beta: optimal in both terms, but partners
// are far apart in the last rounds, which a ring avoids for large messages.
#include "algo/all_gather/recursive_doubling.h"

#include <vector>

#include "algo/blocks/block_messages.h"

namespace comm::algo {

void recursiveDoublingAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes,
                                const size_t* offsets) {
  int n = ctx.size();
  int rank = ctx.rank();
  copyBlock(ctx, static_cast<char*>(out) + offsets[rank], in, bytes[rank]);
  std::vector<core::RequestId> received;
  for (int distance = 1, round = 0; distance < n; distance *= 2, ++round) {
    int partner = rank ^ distance;
    received.clear();
    recvRuns(ctx, partner, round, out, bytes, offsets, partner & ~(distance - 1), distance, received);
    sendRuns(ctx, partner, round, out, bytes, offsets, rank & ~(distance - 1), distance);
    for (core::RequestId id : received) ctx.wait(id);
  }
}

}  // namespace comm::algo
