#include "algo/selection/selection.h"

#include "common/error.h"
#include "common/log.h"

namespace comm::algo {

int selectAlgorithm(const CollectiveTable& table, const Situation& situation, std::string_view forced) {
  if (!forced.empty()) [[unlikely]] {
    int index = table.indexOf(forced);
    if (index < 0) {
      fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO names '{}' for {}, which has no such algorithm", forced,
           core::collectiveName(table.kind));
    }
    if (table.algorithms[index].fitsIn(situation)) return index;
  }
  return table.choose(situation);
}

int chooseFlat(CollectiveContext& ctx, const CollectiveTable& table, size_t bytes) {
  return selectAlgorithm(table, flatSituation(bytes, ctx.size()),
                         ctx.communicator().world().algorithmOverride(table.kind));
}

int decide(CollectiveContext& ctx, size_t bytes) {
  const auto kind = static_cast<core::CollectiveKind>(ctx.signature().kind);
  const CollectiveTable& table = tableOf(kind);
  // Every rank decides alike: the size and whether the communicator has a
  // board are the same everywhere (all_to_all sorts it out on the board).
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const Situation situation{bytes, ctx.size(), ctx.hasBoard(), nodes.count(), nodes.ranksPerNode};
  const std::string& forced = ctx.communicator().world().algorithmOverride(kind);
  int index = selectAlgorithm(table, situation, forced);
  if (log::enabled(log::Level::kDebug)) {  // collectiveName is not free
    if (!forced.empty() && table.algorithms[index].name == forced) {
      log::debug("{} of {} bytes on {} ranks: {} (set by COMM_ALGO)", core::collectiveName(kind), bytes,
                 situation.ranks, forced);
      return index;
    }
    if (!forced.empty()) {
      log::debug("{} of {} bytes on {} ranks: COMM_ALGO's {} cannot run here; the table chooses",
                 core::collectiveName(kind), bytes, situation.ranks, forced);
    }
    log::debug("{} of {} bytes on {} ranks: {}", core::collectiveName(kind), bytes, situation.ranks,
               table.algorithms[index].name);
  }
  return index;
}

}  // namespace comm::algo
