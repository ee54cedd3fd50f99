// Binomial-tree scatter, the gather tree run backwards: the root sends each
// child the blocks of its whole subtree, the largest subtree first; an inner
// rank keeps its own block and passes its children theirs. Ranks are counted
// from the root, so a subtree's blocks are one range of the root's input,
// split in two messages only where the range wraps past rank n-1
// (algo/patterns/blocks.h); the root sends them straight from place. Inner ranks hold
// their subtree packed in a scratch buffer the size of its blocks.
// Cost: ceil(log2 n) alpha + about N beta at the root for N scattered bytes,
// plus a copy per level: the small-message choice.
#include "algo/scatter/binomial.h"

#include <memory>
#include <vector>

#include "algo/blocks/block_messages.h"
#include "algo/patterns/binomial_tree.h"

namespace comm::algo {

void binomialScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                     int root) {
  int rank = ctx.rank();
  BinomialTree tree(ctx.size(), rank, root);
  if (tree.isRoot()) {
    tree.forEachChild([&](int child) {
      sendRuns(ctx, tree.rankOf(child), 0, in, bytes, offsets, tree.rankOf(child), tree.span(child));
    });
    copyBlock(ctx, out, static_cast<const char*>(in) + offsets[rank], bytes[rank]);
    return;
  }
  std::vector<core::RequestId> received;
  if (tree.span() == 1) {
    recvPacked(ctx, tree.parent(), 0, out, bytes, offsets, rank, 1, received);
    return;
  }

  char* subtree = ctx.scratch(core::Scratch::kLanding, Blocks::countOf(ctx.size(), bytes, rank, tree.span()));
  recvPacked(ctx, tree.parent(), 0, subtree, bytes, offsets, rank, tree.span(), received);
  for (core::RequestId id : received) ctx.wait(id);
  tree.forEachChild([&](int child) {
    const char* at = subtree + Blocks::countOf(ctx.size(), bytes, rank, child - tree.vrank());
    sendPacked(ctx, tree.rankOf(child), 0, at, bytes, offsets, tree.rankOf(child), tree.span(child));
  });
  copyBlock(ctx, out, subtree, bytes[rank]);
  ctx.waitAll();  // the sends read the scratch area, which the next collective may take
}

}  // namespace comm::algo
