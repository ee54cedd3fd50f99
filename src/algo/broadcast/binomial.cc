// Binomial-tree broadcast: a rank receives the whole message from its parent,
// then passes it on to its children, the largest subtree first. Every rank
// that has the data keeps sending, so the number of ranks holding it doubles
// each round. Cost: ceil(log2 n) * (alpha + N beta); the latency term is the
// best possible, the bandwidth term log n times the best, so it is for small
// messages (and two ranks, where it is a single send).
#include "algo/broadcast/binomial.h"

#include "algo/binomial_tree.h"

namespace comm::algo {

void binomialBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  if (bytes == 0) return;
  BinomialTree tree(ctx.size(), ctx.rank(), root);
  if (!tree.isRoot()) ctx.wait(ctx.recv(tree.parent(), 0, buffer, bytes));
  tree.forEachChild([&](int child) { ctx.send(tree.rankOf(child), 0, buffer, bytes); });
}

}  // namespace comm::algo
