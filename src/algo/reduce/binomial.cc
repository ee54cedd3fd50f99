// Binomial-tree reduce (algo/patterns/binomial_tree.h): each rank reduces the
// partial results of its children into its own data, smallest subtree
// (nearest relative rank) first, and sends the result to its parent. A node
// combines its own, lower relative ranks first, in a fixed order, so
// results are deterministic. Messages stream in chunks, and a node forwards
// each chunk of its result as soon as its last child's chunk is reduced, so
// large vectors pipeline up the tree. For small vectors.
// Cost for N bytes: ceil(log2 n) (alpha + N beta + N gamma).
#include "algo/reduce/binomial.h"

#include <memory>
#include <vector>

#include "algo/blocks/pipeline.h"
#include "algo/patterns/binomial_tree.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {

void binomialReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                    int root) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  BinomialTree tree(ctx.size(), ctx.rank(), root);
  // The message from the child at relative distance d carries step d.
  std::vector<int> children;
  tree.forEachChild([&](int child) { children.insert(children.begin(), child); });
  const auto parentStep = static_cast<uint32_t>(tree.vrank() & -tree.vrank());  // the parent's distance

  if (children.empty()) {
    waitEach(ctx, sendChunks(ctx, tree.parent(), parentStep, in, bytes));
    return;
  }
  // Partials gather in `acc`: the root's `out`, elsewhere a scratch area.
  // Each child's chunk is reduced out of the staging area while it is still
  // in cache: no landing area the size of the message to write and read
  // back.
  char* acc = tree.isRoot() ? static_cast<char*>(out) : ctx.scratch(core::Scratch::kResult, bytes);
  const char* partial = static_cast<const char*>(in);
  std::vector<RequestId> sent;
  for (int child : children) {
    bool lastChild = child == children.back();
    auto step = static_cast<uint32_t>(child - tree.vrank());
    receiveStaged(ctx, tree.rankOf(child), step, bytes, [&](size_t offset, size_t size, const char* staged) {
      reduce::combine(acc + offset, partial + offset, staged, size / elementSize, dtype, op);
      if (lastChild && !tree.isRoot()) sent.push_back(ctx.send(tree.parent(), parentStep, acc + offset, size));
    });
    partial = acc;
  }
  waitEach(ctx, sent);
}

}  // namespace comm::algo
