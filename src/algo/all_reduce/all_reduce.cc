// comm::algo::allReduce: the dispatch from the selection table to an algorithm.
#include <cstring>
#include <string_view>

#include "algo/all_reduce/rabenseifner.h"
#include "algo/all_reduce/recursive_doubling.h"
#include "algo/all_reduce/ring.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection.h"
#include "core/dtype.h"
#include "core/error.h"

namespace comm::algo {

void allReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  size_t bytes = count * dtypeSize(dtype);
  std::string_view algorithm = choose(ctx, bytes);
  if (ctx.size() == 1 || count == 0) {
    if (in != out && bytes > 0) std::memcpy(out, in, bytes);
    return;
  }
  if (algorithm == "board") {
    boardAllReduce(ctx, in, out, count, dtype, op);
  } else if (algorithm == "recursive_doubling") {
    recursiveDoublingAllReduce(ctx, in, out, count, dtype, op);
  } else if (algorithm == "rabenseifner") {
    rabenseifnerAllReduce(ctx, in, out, count, dtype, op);
  } else if (algorithm == "ring") {
    ringAllReduce(ctx, in, out, count, dtype, op);
  } else {
    fail(COMM_ERR_INTERNAL, "all_reduce has no algorithm '{}'", algorithm);
  }
}

}  // namespace comm::algo
