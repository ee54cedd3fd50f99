// Binomial-tree broadcast: a rank receives the whole message from its parent,
// then passes it on to its children, the largest subtree first. Every rank
// that has the data keeps sending, so the number of ranks holding it doubles
// each round. Cost: ceil(log2 n) * (alpha + N beta); the latency term is the
// best possible, the bandwidth term log n times the best, so it is for small
// messages (and two ranks, where it is a single send). Over comm's TCP
// transport the message travels in chunks (algo/blocks/pipeline.h), each
// passed on to the children as soon as it is in.
#include "algo/broadcast/binomial.h"

#include "algo/blocks/pipeline.h"
#include "algo/patterns/binomial_tree.h"

namespace comm::algo {

void binomialBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  if (bytes == 0) return;
  BinomialTree tree(ctx.size(), ctx.rank(), root);
  auto* data = static_cast<char*>(buffer);
  const size_t chunk = transferChunkBytes(ctx);
  if (tree.isRoot()) {
    tree.forEachChild([&](int child) { sendChunks(ctx, tree.rankOf(child), 0, data, bytes, chunk); });
    return;
  }
  receiveChunks(
      ctx, tree.parent(), 0, data, bytes,
      [&](size_t offset, size_t size) {
        tree.forEachChild([&](int child) { ctx.send(tree.rankOf(child), 0, data + offset, size); });
      },
      chunk);
}

}  // namespace comm::algo
