// Scatter + all-gather broadcast (van de Geijn): the message is cut into n
// chunks of ceil(N/n) bytes (the last ones shorter or empty), chunk v
// belonging to the rank v places after the root. A binomial tree scatters the
// chunks -- every subtree's chunks are one contiguous range of the buffer, so
// each tree edge is one message straight into place -- and a ring all-gather
// then gives every rank every chunk.
// Cost: scatter log2(n) alpha + (n-1)/n N beta, ring (n-1) alpha + (n-1)/n N
// beta; about 2 N beta in all against binomial's log2(n) N beta, so it wins
// for large messages on three or more ranks.
#include "algo/broadcast/scatter_all_gather.h"

#include <algorithm>
#include <vector>

#include "algo/all_gather/ring.h"
#include "algo/patterns/binomial_tree.h"

namespace comm::algo {
namespace {

// Distinct from the ring's steps (0 .. n-2).
constexpr uint32_t kScatterStep = 0x80000000u;

}  // namespace

void scatterAllGatherBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  if (bytes == 0) return;
  int n = ctx.size();
  size_t chunk = (bytes + n - 1) / n;
  auto chunkStart = [&](int vrank) { return std::min(static_cast<size_t>(vrank) * chunk, bytes); };
  char* data = static_cast<char*>(buffer);

  BinomialTree tree(n, ctx.rank(), root);
  int v = tree.vrank();
  if (!tree.isRoot()) {
    size_t begin = chunkStart(v), end = chunkStart(v + tree.span());
    if (end > begin) ctx.wait(ctx.recv(tree.parent(), kScatterStep, data + begin, end - begin));
  }
  tree.forEachChild([&](int child) {
    size_t begin = chunkStart(child), end = chunkStart(child + tree.span(child));
    if (end > begin) ctx.send(tree.rankOf(child), kScatterStep, data + begin, end - begin);
  });
  // The ring writes the chunks those sends read (with equal bytes): let them finish first.
  ctx.waitAll();

  std::vector<size_t> blockBytes(n), blockOffsets(n);
  for (int r = 0; r < n; ++r) {
    int vrank = (r - root + n) % n;
    blockOffsets[r] = chunkStart(vrank);
    blockBytes[r] = chunkStart(vrank + 1) - blockOffsets[r];
  }
  ringAllGather(ctx, data + blockOffsets[ctx.rank()], data, blockBytes.data(), blockOffsets.data());
}

}  // namespace comm::algo
