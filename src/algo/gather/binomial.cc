// Binomial-tree gather: leaves send their block to their parent; an inner
// rank collects its children's subtrees next to its own block and sends the
// lot up. Ranks are counted from the root, so a subtree is a range of ranks
// modulo n and its blocks are adjacent in the root's output except where the
// range wraps past rank n-1: that is where a subtree's data splits into two
// messages (algo/patterns/blocks.h), which the root receives straight into place --
// the rotation costs no copy. Inner ranks keep their subtree packed in a
// scratch buffer the size of its blocks.
// Cost: ceil(log2 n) alpha + about N beta at the root for N gathered bytes,
// plus a copy per level; the few messages make it the small-message choice.
#include "algo/gather/binomial.h"

#include <memory>
#include <vector>

#include "algo/blocks/block_messages.h"
#include "algo/patterns/binomial_tree.h"

namespace comm::algo {

void binomialGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                    int root) {
  int rank = ctx.rank();
  BinomialTree tree(ctx.size(), rank, root);
  std::vector<core::RequestId> received;
  if (tree.isRoot()) {
    copyBlock(ctx, static_cast<char*>(out) + offsets[rank], in, bytes[rank]);
    tree.forEachChild([&](int child) {
      recvRuns(ctx, tree.rankOf(child), 0, out, bytes, offsets, tree.rankOf(child), tree.span(child), received);
    });
    return;
  }
  if (tree.span() == 1) return sendPacked(ctx, tree.parent(), 0, in, bytes, offsets, rank, 1);

  char* subtree = ctx.scratch(core::Scratch::kLanding, Blocks::countOf(ctx.size(), bytes, rank, tree.span()));
  tree.forEachChild([&](int child) {
    char* at = subtree + Blocks::countOf(ctx.size(), bytes, rank, child - tree.vrank());
    recvPacked(ctx, tree.rankOf(child), 0, at, bytes, offsets, tree.rankOf(child), tree.span(child), received);
  });
  copyBlock(ctx, subtree, in, bytes[rank]);
  for (core::RequestId id : received) ctx.wait(id);
  sendPacked(ctx, tree.parent(), 0, subtree, bytes, offsets, rank, tree.span());
  ctx.waitAll();  // the sends read the scratch area, which the next collective may take
}

}  // namespace comm::algo
