// Linear gather: every rank sends its block straight to the root, which
// receives all of them at once into place. No rank forwards anything, so
// there are no copies and no store-and-forward delay; the root's link is the
// bottleneck either way for large blocks.
// Cost: (n-1) alpha + (n-1)/n N beta at the root (receives overlap).
#include "algo/gather/linear.h"

#include <vector>

#include "algo/blocks/block_messages.h"

namespace comm::algo {

void linearGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                  int root) {
  int n = ctx.size();
  int rank = ctx.rank();
  if (rank != root) return sendPacked(ctx, root, 0, in, bytes, offsets, rank, 1);
  std::vector<core::RequestId> received;
  for (int peer = 0; peer < n; ++peer) {
    if (peer != root) recvRuns(ctx, peer, 0, out, bytes, offsets, peer, 1, received);
  }
  // After the receives are out, so the copy overlaps the transfers.
  copyBlock(ctx, static_cast<char*>(out) + offsets[rank], in, bytes[rank]);
}

}  // namespace comm::algo
