// comm::algo::allToAll: the dispatch from the selection table to an
// algorithm; all_to_all_single and all_to_all share it.
#include <numeric>
#include <string_view>

#include "algo/all_to_all/pairwise.h"
#include "algo/board_collectives.h"
#include "algo/collectives.h"
#include "algo/selection.h"
#include "core/error.h"

namespace comm::algo {

void allToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
              const size_t* recvBytes) {
  // Ranks may send different amounts, so they choose by their own sizes:
  // the board finds out whether everyone's fitted and falls back if not.
  std::string_view algorithm = choose(ctx, boardAllToAllBytes(ctx.size(), sendBytes));
  if (algorithm == "board") {
    if (boardAllToAll(ctx, send, sendBytes, recv, recvBytes)) return;
    algorithm = "pairwise";
  }
  if (algorithm == "pairwise") return pairwiseAllToAll(ctx, send, sendBytes, recv, recvBytes);
  fail(COMM_ERR_INTERNAL, "all_to_all has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
