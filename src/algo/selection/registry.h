// One table per collective: its algorithms (name, summary, traits, the
// constraint it needs to run, the functions that run it) and the rules that
// choose among them. Selection (algo/selection/selection.h), COMM_ALGO,
// comm-info and the tests read these tables and nothing else; adding an
// algorithm is one row in its collective's table (the dispatch file of its
// folder) and its rules.
//
// The rules are the cost model: measured windows of message size and group
// size where each algorithm wins (docs/algorithms.md), tried in order, the
// first that applies and whose algorithm fits winning. On one node, where
// copies, cache traffic and the node board dominate, measured windows have
// predicted the winner better than latency-bandwidth formulas.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "core/signature.h"

namespace comm::algo {

// What an algorithm's constraint and the rules look at: the same on every
// rank of a collective, so every rank chooses alike.
struct Situation {
  size_t bytes = 0;       // the collective's message size as it defines it
  int ranks = 1;          // the group's size
  bool hasBoard = false;  // the communicator has a node board (core/node_board.h)
  int nodes = 1;          // nodes the group spans (core::NodeLayout)
  int ranksPerNode = 0;   // every node's ranks, 0 when nodes hold different numbers
};

// Whether an algorithm can run in this situation; nullptr: in every one.
using Fits = bool (*)(const Situation&);

// A row's description, the same for every collective: what selection,
// COMM_ALGO, the dispatch and comm-info read.
struct AlgorithmInfo {
  std::string_view name;
  std::string_view summary;  // one line: how it works and where it wins (comm-info --algorithms)
  Fits fits = nullptr;
  // It orders the group's ranks itself: by node (core::NodeLayout), or in
  // the board's slots, which are the communicator's ranks. Where a dispatch
  // runs flat algorithms over ranks placed round-robin in node order, so
  // that they cross between nodes as few times as with block placement
  // (all_reduce, all_gather), it runs these as called.
  bool ordersRanksItself = false;
  // It takes its caller's hooks, called piece by piece as it goes (a phase
  // of a hierarchical algorithm overlaps the node's work with them); the
  // others have their hooks called once before and once after. Set from
  // the row (Algorithm::runWithHooks), never by hand.
  bool takesHooks = false;

  bool fitsIn(const Situation& situation) const { return fits == nullptr || fits(situation); }
};

inline constexpr size_t kAnyBytes = std::numeric_limits<size_t>::max();
inline constexpr int kAnyRanks = std::numeric_limits<int>::max();

// The table chooses `algorithm` (an index into its collective's algorithms)
// for messages of at most maxBytes on groups of at most maxRanks, only
// without a node board when withoutBoard is set.
struct Rule {
  uint8_t algorithm;
  size_t maxBytes;
  int maxRanks;
  bool withoutBoard = false;
};

struct CollectiveTable {
  core::CollectiveKind kind;
  std::span<const AlgorithmInfo> algorithms;
  std::span<const Rule> rules;  // in matching order; the last applies everywhere

  // The algorithm called `name`, or -1.
  int indexOf(std::string_view name) const;
  bool applies(const Rule& rule, const Situation& situation) const {
    return situation.bytes <= rule.maxBytes && situation.ranks <= rule.maxRanks &&
           !(rule.withoutBoard && situation.hasBoard) && algorithms[rule.algorithm].fitsIn(situation);
  }
  // The index of the first rule's algorithm that applies (the table's last
  // rule must apply everywhere; tests/unit/selection_test.cc checks).
  int choose(const Situation& situation) const;
};

// AlgorithmFnWithHooks of a collective none of whose rows take hooks: never defined.
struct NoHooks;

// One algorithm of a collective whose algorithms all run as `AlgorithmFn`; those
// that take hooks also run as `AlgorithmFnWithHooks`.
template <typename AlgorithmFn, typename AlgorithmFnWithHooks = NoHooks>
struct Algorithm {
  AlgorithmInfo info;
  AlgorithmFn* run;
  AlgorithmFnWithHooks* runWithHooks = nullptr;
};

// The AlgorithmInfo column of a collective's algorithms, in their order.
template <typename AlgorithmFn, typename AlgorithmFnWithHooks, size_t N>
constexpr std::array<AlgorithmInfo, N> infoOf(const Algorithm<AlgorithmFn, AlgorithmFnWithHooks> (&algorithms)[N]) {
  std::array<AlgorithmInfo, N> info{};
  for (size_t i = 0; i < N; ++i) {
    info[i] = algorithms[i].info;
    info[i].takesHooks = algorithms[i].runWithHooks != nullptr;
  }
  return info;
}

// A rule naming its algorithm; a name the collective lacks does not compile.
template <size_t N>
consteval Rule rule(const std::array<AlgorithmInfo, N>& algorithms, std::string_view name, size_t maxBytes,
                    int maxRanks, bool withoutBoard = false) {
  for (size_t i = 0; i < N; ++i) {
    if (algorithms[i].name == name) return {static_cast<uint8_t>(i), maxBytes, maxRanks, withoutBoard};
  }
  throw "a rule names an algorithm its collective does not have";
}

// Constraints several collectives share.
bool fitsBoard(const Situation& situation);  // a board, and a payload and group it carries
bool powerOfTwo(const Situation& situation);
// Several nodes with the same number (> 1) of ranks each: hierarchical
// algorithms pair each rank with the ranks with the same local rank on every node.
bool evenNodes(const Situation& situation);
// Several nodes, of any sizes.
bool spansNodes(const Situation& situation);
// Several nodes, not all of one rank (even nodes of L > 1 or uneven ones):
// where gathering each node's ranks first can save network messages.
bool nodesOfSeveralRanks(const Situation& situation);

// Every collective's table, one per kind (the V forms share their plain
// form's algorithms and rules).
std::span<const CollectiveTable* const> collectiveTables();
const CollectiveTable& tableOf(core::CollectiveKind kind);

// Each collective's table, defined in its dispatch file.
extern const CollectiveTable kBarrierTable;
extern const CollectiveTable kBroadcastTable;
extern const CollectiveTable kAllGatherTable;
extern const CollectiveTable kAllGatherVTable;
extern const CollectiveTable kGatherTable;
extern const CollectiveTable kGatherVTable;
extern const CollectiveTable kScatterTable;
extern const CollectiveTable kScatterVTable;
extern const CollectiveTable kAllToAllSingleTable;
extern const CollectiveTable kAllToAllTable;
extern const CollectiveTable kAllReduceTable;
extern const CollectiveTable kReduceTable;
extern const CollectiveTable kReduceScatterTable;
extern const CollectiveTable kReduceScatterVTable;

}  // namespace comm::algo
