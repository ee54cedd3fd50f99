#include "algo/selection.h"

#include "algo/registry.h"
#include "common/error.h"
#include "common/log.h"

namespace comm::algo {

int decide(CollectiveContext& ctx, size_t bytes) {
  const auto kind = static_cast<core::CollectiveKind>(ctx.signature().kind);
  const CollectiveTable& table = tableOf(kind);
  // Every rank decides alike: the size and whether the communicator has a
  // board are the same everywhere (all_to_all sorts it out on the board).
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const Situation situation{bytes, ctx.size(), ctx.hasBoard(), nodes.count(), nodes.ranksPerNode};
  const std::string& forced = ctx.communicator().world().algorithmOverride(kind);
  if (!forced.empty()) {
    int index = table.indexOf(forced);
    if (index < 0) {
      fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO names '{}' for {}, which has no such algorithm", forced,
           core::collectiveName(kind));
    }
    if (table.algorithms[index].fitsIn(situation)) {
      log::debug("{} of {} bytes on {} ranks: {} (set by COMM_ALGO)", core::collectiveName(kind), bytes,
                 situation.ranks, forced);
      return index;
    }
    log::debug("{} of {} bytes on {} ranks: COMM_ALGO's {} cannot run here; the table chooses",
               core::collectiveName(kind), bytes, situation.ranks, forced);
  }
  int index = table.choose(situation);
  if (log::enabled(log::Level::kDebug)) {  // collectiveName is not free
    log::debug("{} of {} bytes on {} ranks: {}", core::collectiveName(kind), bytes, situation.ranks,
               table.algorithms[index].name);
  }
  return index;
}

}  // namespace comm::algo
