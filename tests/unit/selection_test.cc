// The selection tables (algo/selection/registry.h): every collective has one,
// every table chooses something in every situation, every algorithm can be
// chosen, and the rules choose what docs/algorithms.md says they do; every
// row describes itself; COMM_ALGO reaches the flat phases of the hierarchical
// algorithms (algo/selection/selection.h).
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "algo/selection/registry.h"
#include "algo/selection/selection.h"
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

// Every row has a summary for comm-info, and its traits say what the
// dispatch needs: the algorithms that group the ranks by node order them
// themselves, and only the rings, which the hierarchical algorithms
// overlap their node phases with, take hooks.
void everyRowDescribesItself(void**) {
  const std::set<std::string_view> byNode = {"hierarchical", "node_leaders"};
  for (const CollectiveTable* table : comm::algo::collectiveTables()) {
    for (const comm::algo::AlgorithmInfo& algorithm : table->algorithms) {
      assert_false(algorithm.summary.empty());
      assert_true(algorithm.summary.find('\n') == std::string_view::npos);
      if (byNode.count(algorithm.name) > 0) assert_true(algorithm.ordersRanksItself);
      if (algorithm.takesHooks) assert_true(algorithm.name == "ring");
    }
  }
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kAllGatherV,
                              CollectiveKind::kReduceScatter, CollectiveKind::kReduceScatterV}) {
    const CollectiveTable& table = comm::algo::tableOf(kind);
    assert_true(table.algorithms[table.indexOf("ring")].takesHooks);
  }
  // The board's slots are the communicator's ranks: all_gather's board keeps
  // rank order; all_reduce's result is the same on every rank, in any order.
  const CollectiveTable& allGather = comm::algo::tableOf(CollectiveKind::kAllGather);
  assert_true(allGather.algorithms[allGather.indexOf("board")].ordersRanksItself);
  const CollectiveTable& allReduce = comm::algo::tableOf(CollectiveKind::kAllReduce);
  assert_false(allReduce.algorithms[allReduce.indexOf("ring")].ordersRanksItself);
}

// The phase across nodes of the hierarchical all_reduce and node_leaders
// (flatAllReduce) chooses through chooseFlat: the flat situation of its
// group, and the algorithm COMM_ALGO forces for all_reduce where it fits
// there, as a whole call would; one that cannot run flat leaves the choice
// to the table.
void forcedAlgorithmReachesTheFlatPhase(void**) {
  const CollectiveTable& table = comm::algo::tableOf(CollectiveKind::kAllReduce);
  auto flat = [&](size_t bytes, int ranks, std::string_view forced) {
    return table.algorithms[comm::algo::selectAlgorithm(table, comm::algo::flatSituation(bytes, ranks), forced)].name;
  };
  assert_true(flat(64 * kMiB, 4, "") == "ring");
  assert_true(flat(64 * kMiB, 4, "recursive_doubling") == "recursive_doubling");
  assert_true(flat(8, 3, "rabenseifner") == "rabenseifner");
  assert_true(flat(8, 3, "ring") == "ring");
  assert_true(flat(64 * kMiB, 4, "hierarchical") == "ring");
  assert_true(flat(64 * kMiB, 4, "node_leaders") == "ring");
  assert_true(flat(8, 4, "board") == "recursive_doubling");
  // all_gather's phases likewise, where the forced algorithm's constraint holds.
  const CollectiveTable& allGather = comm::algo::tableOf(CollectiveKind::kAllGather);
  auto flatGather = [&](size_t bytes, int ranks, std::string_view forced) {
    return allGather.algorithms[comm::algo::selectAlgorithm(allGather, comm::algo::flatSituation(bytes, ranks), forced)]
        .name;
  };
  assert_true(flatGather(64 * kMiB, 4, "recursive_doubling") == "recursive_doubling");
  assert_true(flatGather(64 * kMiB, 3, "recursive_doubling") == "ring");
  // A whole call's situation takes the same rule.
  assert_true(table.algorithms[comm::algo::selectAlgorithm(table, Situation{64 * kMiB, 8, false, 4, 2}, "ring")].name ==
              "ring");
  assert_true(table.algorithms[comm::algo::selectAlgorithm(table, Situation{64 * kMiB, 8, false, 4, 2}, "")].name ==
              "hierarchical");
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
      cmocka_unit_test(everyRowDescribesItself),
      cmocka_unit_test(forcedAlgorithmReachesTheFlatPhase),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
