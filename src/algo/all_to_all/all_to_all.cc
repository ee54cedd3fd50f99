// comm::algo::allToAll: the dispatch from the selection table to an
// algorithm; all_to_all_single and all_to_all share it.
#include <numeric>
#include <string_view>

#include "algo/all_to_all/pairwise.h"
#include "algo/collectives.h"
#include "algo/selection.h"
#include "core/error.h"

namespace comm::algo {

void allToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
              const size_t* recvBytes) {
  // Ranks may send different amounts, so a size-dependent row would need the
  // ranks to agree on a size first; this one is only this rank's total.
  std::string_view algorithm = choose(ctx, std::accumulate(sendBytes, sendBytes + ctx.size(), size_t{0}));
  if (algorithm == "pairwise") return pairwiseAllToAll(ctx, send, sendBytes, recv, recvBytes);
  fail(COMM_ERR_INTERNAL, "all_to_all has no algorithm '{}'", algorithm);
}

}  // namespace comm::algo
