// Linear scatter: the root sends every rank its block straight from place,
// all at once; nobody forwards, so there are no copies.
// Cost: (n-1) alpha + (n-1)/n N beta at the root (sends overlap).
#include "algo/scatter/linear.h"

#include <vector>

#include "algo/blocks/block_messages.h"

namespace comm::algo {

void linearScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                   int root) {
  int n = ctx.size();
  int rank = ctx.rank();
  if (rank != root) {
    std::vector<core::RequestId> received;
    recvPacked(ctx, root, 0, out, bytes, offsets, rank, 1, received);
    return;
  }
  for (int peer = 0; peer < n; ++peer) {
    if (peer != root) sendRuns(ctx, peer, 0, in, bytes, offsets, peer, 1);
  }
  copyBlock(ctx, out, static_cast<const char*>(in) + offsets[rank], bytes[rank]);
}

}  // namespace comm::algo
