#include "algo/blocks/fold_exchange.h"

#include <vector>

#include "algo/blocks/pipeline.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {

void handOver(CollectiveContext& ctx, const Fold& fold, const void* in, size_t inBytes, void* result,
              size_t resultBytes, uint32_t foldStep, uint32_t unfoldStep) {
  // The result may land where `in` is still being read: wait for the sends first.
  waitEach(ctx, sendChunks(ctx, fold.partner(), foldStep, in, inBytes));
  ctx.wait(ctx.recv(fold.partner(), unfoldStep, result, resultBytes));
}

void combineFolded(CollectiveContext& ctx, const Fold& fold, const void* in, void* acc, size_t count,
                   comm_dtype_t dtype, comm_op_t op, uint32_t foldStep) {
  size_t elementSize = dtypeSize(dtype);
  size_t bytes = count * elementSize;
  // In place the partner's data needs a landing area of its own.
  std::vector<char> spare(acc == in ? bytes : 0);
  char* landing = acc == in ? spare.data() : static_cast<char*>(acc);
  auto* mine = static_cast<const char*>(in);
  auto* out = static_cast<char*>(acc);
  receiveChunks(ctx, fold.partner(), foldStep, landing, bytes, [&](size_t offset, size_t size) {
    reduce::combine(out + offset, landing + offset, mine + offset, size / elementSize, dtype, op);
  });
}

bool enterAllReduceFold(CollectiveContext& ctx, const Fold& fold, const void* in, void* out, size_t count,
                        comm_dtype_t dtype, comm_op_t op, uint32_t foldStep, uint32_t unfoldStep) {
  if (fold.handsOver()) {
    const size_t bytes = count * dtypeSize(dtype);
    handOver(ctx, fold, in, bytes, out, bytes, foldStep, unfoldStep);
    return true;
  }
  if (fold.carriesPartner()) combineFolded(ctx, fold, in, out, count, dtype, op, foldStep);
  return false;
}

}  // namespace comm::algo
