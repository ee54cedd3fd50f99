// The selection tables (algo/registry.h): every collective has one, every
// table chooses something in every situation, every algorithm can be chosen,
// and the rules choose what docs/algorithms.md says they do.
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "algo/registry.h"
#include "core/node_board.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using comm::algo::CollectiveTable;
using comm::algo::Rule;
using comm::algo::Situation;
using comm::core::CollectiveKind;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

std::string_view chosen(CollectiveKind kind, size_t bytes, int ranks, bool hasBoard) {
  const CollectiveTable& table = comm::algo::tableOf(kind);
  return table.algorithms[table.choose(Situation{bytes, ranks, hasBoard})].name;
}

void everyKindHasItsTable(void**) {
  for (auto k = static_cast<size_t>(CollectiveKind::kBarrier); k < comm::core::kCollectiveKinds; ++k) {
    auto kind = static_cast<CollectiveKind>(k);
    assert_true(comm::algo::tableOf(kind).kind == kind);
  }
  assert_int_equal(comm::algo::collectiveTables().size(),
                   comm::core::kCollectiveKinds - static_cast<size_t>(CollectiveKind::kBarrier));
}

// The last rule takes whatever the others leave: any size, any group, with
// or without a board, an algorithm that runs everywhere.
void lastRuleAppliesEverywhere(void**) {
  for (const CollectiveTable* table : comm::algo::collectiveTables()) {
    const Rule& last = table->rules.back();
    assert_true(last.maxBytes == comm::algo::kAnyBytes);
    assert_true(last.maxRanks == comm::algo::kAnyRanks);
    assert_false(last.withoutBoard);
    assert_null(table->algorithms[last.algorithm].fits);
    for (int ranks : {1, 2, 3, 7, 16, 17, 1000}) {
      for (size_t bytes : {size_t{0}, size_t{8}, 5000 * kKiB, size_t{1} << 40}) {
        for (bool board : {false, true}) table->choose(Situation{bytes, ranks, board});
      }
    }
  }
}

void everyAlgorithmIsChosenSomewhereAndNamedOnce(void**) {
  for (const CollectiveTable* table : comm::algo::collectiveTables()) {
    std::set<std::string_view> names;
    for (const auto& algorithm : table->algorithms) {
      assert_true(names.insert(algorithm.name).second);
      assert_int_equal(table->indexOf(algorithm.name), &algorithm - table->algorithms.data());
    }
    assert_int_equal(table->indexOf("no_such_algorithm"), -1);
    std::set<int> ruled;
    for (const Rule& rule : table->rules) ruled.insert(rule.algorithm);
    assert_int_equal(ruled.size(), table->algorithms.size());
  }
}

void theBoardTakesSmallCallsOnItsGroups(void**) {
  const size_t payload = comm::core::NodeBoard::kPayloadBytes;
  const int ranks = comm::core::NodeBoard::kPayloadRanks;
  assert_true(chosen(CollectiveKind::kAllReduce, payload, ranks, true) == "board");
  assert_true(chosen(CollectiveKind::kAllReduce, payload + 1, ranks, true) != "board");
  assert_true(chosen(CollectiveKind::kAllReduce, 8, ranks + 1, true) != "board");
  assert_true(chosen(CollectiveKind::kAllReduce, 8, 4, false) != "board");
  // The barrier publishes nothing: any group with a board.
  assert_true(chosen(CollectiveKind::kBarrier, 0, 1000, true) == "board");
  assert_true(chosen(CollectiveKind::kBarrier, 0, 1000, false) == "dissemination");
}

void sizesChooseAsDocumented(void**) {
  assert_true(chosen(CollectiveKind::kAllReduce, 16 * kKiB, 4, false) == "recursive_doubling");
  assert_true(chosen(CollectiveKind::kAllReduce, 16 * kKiB + 1, 4, false) == "rabenseifner");
  assert_true(chosen(CollectiveKind::kAllReduce, 512 * kKiB + 1, 4, false) == "ring");
  assert_true(chosen(CollectiveKind::kBroadcast, 128 * kKiB, 8, false) == "binomial");
  assert_true(chosen(CollectiveKind::kBroadcast, 64 * kMiB, 2, false) == "binomial");
  assert_true(chosen(CollectiveKind::kBroadcast, 64 * kMiB, 3, false) == "scatter_all_gather");
  assert_true(chosen(CollectiveKind::kGatherV, 64 * kKiB, 5, false) == "binomial");
  assert_true(chosen(CollectiveKind::kScatter, 64 * kKiB + 1, 5, false) == "linear");
  assert_true(chosen(CollectiveKind::kReduceScatterV, 64 * kKiB, 6, false) == "recursive_halving");
  assert_true(chosen(CollectiveKind::kReduceScatter, 64 * kKiB + 1, 6, false) == "ring");
  assert_true(chosen(CollectiveKind::kAllToAllSingle, 1 * kMiB, 3, false) == "pairwise");
}

// Recursive doubling needs a power-of-two group; Bruck takes the others.
void allGatherDoublesOnlyOnPowersOfTwo(void**) {
  assert_true(chosen(CollectiveKind::kAllGather, 256 * kKiB, 4, false) == "recursive_doubling");
  assert_true(chosen(CollectiveKind::kAllGatherV, 256 * kKiB, 3, false) == "bruck");
  assert_true(chosen(CollectiveKind::kAllGather, 256 * kKiB + 1, 4, false) == "ring");
  const CollectiveTable& table = comm::algo::tableOf(CollectiveKind::kAllGather);
  assert_false(table.algorithms[table.indexOf("recursive_doubling")].fitsIn(Situation{8, 6, false}));
}

// Without a board, reduce at 2 ranks sends the vector once: the tree.
void reduceAtTwoRanksWithoutABoardTakesTheTree(void**) {
  assert_true(chosen(CollectiveKind::kReduce, 64 * kMiB, 2, false) == "binomial");
  assert_true(chosen(CollectiveKind::kReduce, 64 * kMiB, 2, true) == "reduce_scatter_gather");
  assert_true(chosen(CollectiveKind::kReduce, 64 * kMiB, 3, false) == "reduce_scatter_gather");
  assert_true(chosen(CollectiveKind::kReduce, 64 * kKiB, 3, false) == "binomial");
}

// Several nodes of equal size > 1 take node_leaders up to 256 KiB (1 MiB
// at 2x2) and the hierarchical all_reduce above, nodes of different sizes
// node_leaders at every size; one node or nodes of one rank take the flat
// rows.
void allReduceAcrossNodesLeadersThenHierarchical(void**) {
  const CollectiveTable& table = comm::algo::tableOf(CollectiveKind::kAllReduce);
  auto across = [&](size_t bytes, int ranks, int nodes, int perNode) {
    return table.algorithms[table.choose(Situation{bytes, ranks, false, nodes, perNode})].name;
  };
  assert_true(across(8, 4, 2, 2) == "node_leaders");
  assert_true(across(kMiB, 4, 2, 2) == "node_leaders");
  assert_true(across(kMiB + 1, 4, 2, 2) == "hierarchical");
  assert_true(across(256 * kKiB, 8, 4, 2) == "node_leaders");
  assert_true(across(256 * kKiB + 1, 8, 4, 2) == "hierarchical");
  assert_true(across(64 * kMiB, 8, 4, 2) == "hierarchical");
  assert_true(across(8, 4, 4, 1) == "recursive_doubling");
  assert_true(across(64 * kMiB, 4, 4, 1) == "ring");
  assert_true(across(64 * kMiB, 3, 2, 0) == "node_leaders");
  assert_true(across(8, 5, 3, 0) == "node_leaders");
  assert_true(across(8, 4, 1, 4) == "recursive_doubling");
}

// Several nodes, of any sizes, take the hierarchical broadcast at every
// size but the board's; one node takes the flat rows.
void broadcastAcrossNodesIsHierarchical(void**) {
  const CollectiveTable& table = comm::algo::tableOf(CollectiveKind::kBroadcast);
  auto across = [&](size_t bytes, int ranks, bool board, int nodes, int perNode) {
    return table.algorithms[table.choose(Situation{bytes, ranks, board, nodes, perNode})].name;
  };
  assert_true(across(8, 4, false, 2, 2) == "hierarchical");
  assert_true(across(64 * kMiB, 5, false, 3, 0) == "hierarchical");
  assert_true(across(64 * kMiB, 4, false, 4, 1) == "hierarchical");
  assert_true(across(8, 4, true, 2, 2) == "board");
  assert_true(across(64 * kMiB, 4, false, 1, 4) == "scatter_all_gather");
}

// Likewise reduce.
void reduceAcrossNodesIsHierarchical(void**) {
  const CollectiveTable& table = comm::algo::tableOf(CollectiveKind::kReduce);
  auto across = [&](size_t bytes, int ranks, int nodes, int perNode) {
    return table.algorithms[table.choose(Situation{bytes, ranks, false, nodes, perNode})].name;
  };
  assert_true(across(8, 4, 2, 2) == "hierarchical");
  assert_true(across(64 * kMiB, 5, 3, 0) == "hierarchical");
  assert_true(across(64 * kMiB, 4, 1, 4) == "reduce_scatter_gather");
}

// Across nodes of equal sizes small all_gathers and reduce_scatters take
// the flat algorithms, larger ones the hierarchical ones.
void allGatherAndReduceScatterAcrossNodesFlatWhenSmall(void**) {
  auto across = [&](CollectiveKind kind, size_t bytes, int ranks, int nodes, int perNode) {
    const CollectiveTable& table = comm::algo::tableOf(kind);
    return table.algorithms[table.choose(Situation{bytes, ranks, false, nodes, perNode})].name;
  };
  assert_true(across(CollectiveKind::kAllGather, 4 * kKiB, 8, 4, 2) == "recursive_doubling");
  assert_true(across(CollectiveKind::kAllGatherV, 4 * kKiB, 6, 3, 2) == "bruck");
  assert_true(across(CollectiveKind::kAllGather, 4 * kKiB + 1, 8, 4, 2) == "hierarchical");
  assert_true(across(CollectiveKind::kReduceScatter, 4 * kKiB, 4, 2, 2) == "recursive_halving");
  assert_true(across(CollectiveKind::kReduceScatterV, 4 * kKiB + 1, 4, 2, 2) == "hierarchical");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(everyKindHasItsTable),
      cmocka_unit_test(lastRuleAppliesEverywhere),
      cmocka_unit_test(everyAlgorithmIsChosenSomewhereAndNamedOnce),
      cmocka_unit_test(theBoardTakesSmallCallsOnItsGroups),
      cmocka_unit_test(sizesChooseAsDocumented),
      cmocka_unit_test(allGatherDoublesOnlyOnPowersOfTwo),
      cmocka_unit_test(reduceAtTwoRanksWithoutABoardTakesTheTree),
      cmocka_unit_test(allReduceAcrossNodesLeadersThenHierarchical),
      cmocka_unit_test(broadcastAcrossNodesIsHierarchical),
      cmocka_unit_test(reduceAcrossNodesIsHierarchical),
      cmocka_unit_test(allGatherAndReduceScatterAcrossNodesFlatWhenSmall),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
