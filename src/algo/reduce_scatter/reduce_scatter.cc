// comm::algo::reduceScatterV (reduce_scatter and reduce_scatter_v): the
// dispatch from the selection table to an algorithm. The message size that
// selects is the whole input vector.
#include <cstring>
#include <string_view>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/reduce_scatter/blocks.h"
#include "algo/reduce_scatter/recursive_halving.h"
#include "algo/reduce_scatter/ring.h"
#include "algo/selection.h"
#include "core/dtype.h"
#include "core/error.h"

namespace comm::algo {

void reduceScatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                    comm_dtype_t dtype, comm_op_t op) {
  const int n = ctx.size();
  const size_t elementSize = dtypeSize(dtype);
  Blocks blocks = Blocks::fromCounts(counts, n);
  for (int r = 0; r < n; ++r) {
    if (offsets[r] != blocks.offsets[r]) {
      fail(COMM_ERR_INTERNAL, "reduce_scatter: block {} starts at element {}, not right after block {}", r,
           offsets[r], r - 1);
    }
  }
  std::string_view algorithm = choose(ctx, blocks.total() * elementSize);
  if (n == 1 || blocks.total() == 0) {
    const char* own = static_cast<const char*>(in) + blocks.offsets[ctx.rank()] * elementSize;
    size_t bytes = blocks.counts[ctx.rank()] * elementSize;
    if (own != out && bytes > 0) std::memcpy(out, own, bytes);
    return;
  }
  if (algorithm == "board") {
    boardReduceScatter(ctx, in, out, counts, offsets, dtype, op);
  } else if (algorithm == "recursive_halving") {
    recursiveHalvingReduceScatter(ctx, in, out, blocks, dtype, op);
  } else if (algorithm == "ring") {
    ringReduceScatter(ctx, in, out, blocks, dtype, op, 0);
  } else {
    fail(COMM_ERR_INTERNAL, "reduce_scatter has no algorithm '{}'", algorithm);
  }
}

}  // namespace comm::algo
