// comm::algo::reduce: the dispatch from the selection table to an algorithm.
#include <cstring>
#include <string_view>

#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/reduce/binomial.h"
#include "algo/reduce/reduce_scatter_gather.h"
#include "algo/selection.h"
#include "core/dtype.h"
#include "core/error.h"

namespace comm::algo {

void reduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
            int root) {
  size_t bytes = count * dtypeSize(dtype);
  std::string_view algorithm = choose(ctx, bytes);
  if (ctx.size() == 1 || count == 0) {
    if (ctx.rank() == root && in != out && bytes > 0) std::memcpy(out, in, bytes);
    return;
  }
  if (algorithm == "board") {
    boardReduce(ctx, in, out, count, dtype, op, root);
  } else if (algorithm == "binomial") {
    binomialReduce(ctx, in, out, count, dtype, op, root);
  } else if (algorithm == "reduce_scatter_gather") {
    reduceScatterGatherReduce(ctx, in, out, count, dtype, op, root);
  } else {
    fail(COMM_ERR_INTERNAL, "reduce has no algorithm '{}'", algorithm);
  }
}

}  // namespace comm::algo
