// Recursive doubling all-reduce. In step k each participant swaps its whole
// partial result with the one at distance 2^k and both reduce the pair, so
// after log2 p steps everyone holds the total. Partners make the identical
// combine call (the lower participant's partial first, and partials cover
// consecutive ranks), so both compute the same bits: every rank ends with
// an identical result, reduced in rank order as a binary tree. Non-powers of two fold first
// (algo/patterns/fold.h). For small vectors: latency is all that
// counts.
// Cost for N bytes: log2 p (alpha + N beta + N gamma); folding adds
// 2 alpha + 2 N beta + N gamma.
#include "algo/all_reduce/recursive_doubling.h"

#include <cstring>
#include <memory>
#include <utility>

#include "algo/blocks/fold_exchange.h"
#include "algo/blocks/pipeline.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

enum Step : uint32_t { kFold = 0, kUnfold = 1, kDoubling = 2 };

}  // namespace

void recursiveDoublingAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype,
                                comm_op_t op) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  Fold fold(ctx.size(), ctx.rank());
  if (enterAllReduceFold(ctx, fold, in, out, count, dtype, op, kFold, kUnfold)) return;
  if (!fold.carriesPartner() && in != out) std::memcpy(out, in, bytes);

  // Partners must run the very same combine to get the same bits, operand
  // order and aliasing included (a kernel may swap the operands of an
  // aliased call), so both reduce into the buffer holding the lower
  // participant's partial: on the higher one the result lands in `spare`.
  char* acc = static_cast<char*>(out);
  char* spare = ctx.scratch(core::Scratch::kLanding, bytes);
  const int me = fold.newRank();
  for (int distance = 1, k = 0; distance < fold.participants(); distance *= 2, ++k) {
    int partnerNewRank = me ^ distance;
    int partner = fold.rankOf(partnerNewRank);
    bool lower = me < partnerNewRank;
    RequestRange sent = sendChunks(ctx, partner, kDoubling + k, acc, bytes);
    size_t chunk = 0;
    receiveChunks(ctx, partner, kDoubling + k, spare, bytes, [&](size_t offset, size_t size) {
      if (lower) ctx.wait(sent[chunk++]);  // the chunk about to be overwritten must have left
      char* first = (lower ? acc : spare) + offset;
      char* second = (lower ? spare : acc) + offset;
      reduce::combine(first, first, second, size / elementSize, dtype, op);
    });
    waitEach(ctx, sent);
    if (!lower) std::swap(acc, spare);
  }
  if (acc != out) std::memcpy(out, acc, bytes);
  if (fold.carriesPartner()) ctx.wait(ctx.send(fold.partner(), kUnfold, out, bytes));
}

}  // namespace comm::algo
