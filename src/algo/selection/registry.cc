#include "algo/selection/registry.h"

#include "common/error.h"
#include "core/node_board.h"

namespace comm::algo {

int CollectiveTable::indexOf(std::string_view name) const {
  for (size_t i = 0; i < algorithms.size(); ++i) {
    if (algorithms[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int CollectiveTable::choose(const Situation& situation) const {
  for (const Rule& rule : rules) {
    if (applies(rule, situation)) return rule.algorithm;
  }
  fail(COMM_ERR_INTERNAL, "the selection table of {} has no rule for {} bytes on {} ranks", core::collectiveName(kind),
       situation.bytes, situation.ranks);
}

bool fitsBoard(const Situation& situation) {
  return situation.hasBoard && situation.bytes <= core::NodeBoard::kPayloadBytes &&
         situation.ranks <= core::NodeBoard::kPayloadRanks;
}

bool powerOfTwo(const Situation& situation) { return (situation.ranks & (situation.ranks - 1)) == 0; }

bool evenNodes(const Situation& situation) { return situation.nodes > 1 && situation.ranksPerNode > 1; }

bool spansNodes(const Situation& situation) { return situation.nodes > 1; }

bool nodesOfSeveralRanks(const Situation& situation) { return situation.nodes > 1 && situation.ranksPerNode != 1; }

namespace {

constexpr const CollectiveTable* kTables[] = {
    &kBarrierTable,   &kBroadcastTable, &kAllGatherTable,     &kAllGatherVTable,     &kGatherTable,
    &kGatherVTable,   &kScatterTable,   &kScatterVTable,      &kAllToAllSingleTable, &kAllToAllTable,
    &kAllReduceTable, &kReduceTable,    &kReduceScatterTable, &kReduceScatterVTable,
};

}  // namespace

std::span<const CollectiveTable* const> collectiveTables() { return kTables; }

const CollectiveTable& tableOf(core::CollectiveKind kind) {
  for (const CollectiveTable* table : kTables) {
    if (table->kind == kind) return *table;
  }
  fail(COMM_ERR_INTERNAL, "no selection table for {}", core::collectiveName(kind));
}

}  // namespace comm::algo
