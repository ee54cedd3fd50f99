// Rabenseifner's all-reduce: a reduce-scatter by recursive halving leaves
// participant i with block i of the result, then an all-gather by recursive
// doubling (distance 1, 2, 4, ...) swaps ever larger finished ranges until
// everyone has the whole vector. Each block is reduced at one participant
// only and then copied, so every rank holds identical bits. Non-powers of
// two fold first (algo/patterns/fold.h), which is why the table
// leaves the largest vectors to the ring.
// Cost for N bytes, p = n: 2 log2 p alpha + 2 (p-1)/p N beta + (p-1)/p N
// gamma; folding adds 2 alpha + 2 N beta + N gamma.
#include "algo/all_reduce/rabenseifner.h"

#include <bit>

#include "algo/blocks/fold_exchange.h"
#include "algo/blocks/pipeline.h"
#include "algo/patterns/blocks.h"
#include "algo/reduce_scatter/recursive_halving.h"
#include "common/dtype.h"

namespace comm::algo {
namespace {

enum Step : uint32_t { kFold = 0, kUnfold = 1, kHalving = 2 };

// After the halving participant i holds block i of `data`; swap finished
// ranges with partners at distance 1, 2, 4... until all hold every block.
// The all-gather half of the algorithm, in place among the fold's
// participants: not recursiveDoublingAllGather
// (algo/all_gather/recursive_doubling.cc), which takes any blocks on
// the whole group and collects its receives in a vector on every call.
void swapFinishedRanges(CollectiveContext& ctx, const Fold& fold, char* data, const Blocks& blocks, size_t elementSize,
                        uint32_t stepBase) {
  const int me = fold.newRank();
  for (int distance = 1, k = 0; distance < fold.participants(); distance *= 2, ++k) {
    int partnerNewRank = me ^ distance;
    int ours = me & ~(distance - 1);
    int theirs = partnerNewRank & ~(distance - 1);
    int partner = fold.rankOf(partnerNewRank);
    RequestId sent = ctx.send(partner, stepBase + k, data + blocks.offsets()[ours] * elementSize,
                              blocks.span(ours, ours + distance) * elementSize);
    ctx.wait(ctx.recv(partner, stepBase + k, data + blocks.offsets()[theirs] * elementSize,
                      blocks.span(theirs, theirs + distance) * elementSize));
    ctx.wait(sent);
  }
}

}  // namespace

void rabenseifnerAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                           comm_op_t op) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  Fold fold(ctx.size(), ctx.rank());
  if (enterAllReduceFold(ctx, fold, in, out, count, dtype, op, kFold, kUnfold)) return;
  const void* src = fold.carriesPartner() ? out : in;
  auto* data = static_cast<char*>(out);
  Blocks blocks = Blocks::even(count, fold.participants());
  auto halvingSteps = static_cast<uint32_t>(std::countr_zero(static_cast<unsigned>(fold.participants())));
  recursiveHalving(ctx, fold, src, data + blocks.offsets()[fold.newRank()] * elementSize, blocks, dtype, op, kHalving);
  swapFinishedRanges(ctx, fold, data, blocks, elementSize, kHalving + halvingSteps);
  if (fold.carriesPartner()) ctx.wait(ctx.send(fold.partner(), kUnfold, data, bytes));
}

}  // namespace comm::algo
