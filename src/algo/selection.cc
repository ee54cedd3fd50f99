#include "algo/selection.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

#include "core/communicator.h"
#include "core/node_board.h"
#include "core/error.h"
#include "core/log.h"

namespace comm::algo {
namespace {

using core::CollectiveKind;
constexpr size_t kAnyBytes = std::numeric_limits<size_t>::max();
constexpr int kAnyRanks = std::numeric_limits<int>::max();
// Rows naming it apply only on communicators with a node board.
constexpr std::string_view kBoard = "board";
constexpr size_t kBoardBytes = core::NodeBoard::kPayloadBytes;
// The barrier reads no payload and takes the board at any size.
constexpr int kBoardRanks = core::NodeBoard::kPayloadRanks;
// Marks rules for communicators without a node board.
constexpr bool kWithoutBoard = true;

// Rows are tried in order; the first whose limits hold wins. The sizes come
// from measurements on one node (docs/algorithms.md explains each).
constexpr Rule kTable[] = {
    {CollectiveKind::kBarrier, kAnyBytes, kAnyRanks, "board"},
    {CollectiveKind::kBarrier, kAnyBytes, kAnyRanks, "dissemination"},
    {CollectiveKind::kBroadcast, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kBroadcast, 128 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kBroadcast, kAnyBytes, 2, "binomial"},
    {CollectiveKind::kBroadcast, kAnyBytes, kAnyRanks, "scatter_all_gather"},
    {CollectiveKind::kAllGather, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kAllGather, 256 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllGather, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kAllGatherV, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kAllGatherV, 256 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllGatherV, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kGather, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kGather, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kGather, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kGatherV, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kGatherV, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kGatherV, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kScatter, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kScatter, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kScatter, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kScatterV, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kScatterV, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kScatterV, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kAllToAllSingle, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kAllToAllSingle, kAnyBytes, kAnyRanks, "pairwise"},
    {CollectiveKind::kAllToAll, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kAllToAll, kAnyBytes, kAnyRanks, "pairwise"},
    {CollectiveKind::kAllReduce, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kAllReduce, 16 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllReduce, 512 * 1024, kAnyRanks, "rabenseifner"},
    {CollectiveKind::kAllReduce, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kReduce, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kReduce, kAnyBytes, 2, "binomial", kWithoutBoard},
    {CollectiveKind::kReduce, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kReduce, kAnyBytes, kAnyRanks, "reduce_scatter_gather"},
    {CollectiveKind::kReduceScatter, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kReduceScatter, 64 * 1024, kAnyRanks, "recursive_halving"},
    {CollectiveKind::kReduceScatter, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kReduceScatterV, kBoardBytes, kBoardRanks, "board"},
    {CollectiveKind::kReduceScatterV, 64 * 1024, kAnyRanks, "recursive_halving"},
    {CollectiveKind::kReduceScatterV, kAnyBytes, kAnyRanks, "ring"},
};

// Where each collective's rows start: they are adjacent in the table, so a
// choice reads only its own collective's rows.
constexpr size_t kKinds = static_cast<size_t>(CollectiveKind::kScatterV) + 1;
constexpr auto kFirstRow = [] {
  std::array<size_t, kKinds> first{};
  first.fill(std::size(kTable));
  for (size_t i = std::size(kTable); i-- > 0;) first[static_cast<size_t>(kTable[i].kind)] = i;
  return first;
}();
constexpr bool rowsAdjacent() {
  for (size_t i = 0; i < std::size(kTable); ++i) {
    bool startsRun = i == 0 || kTable[i].kind != kTable[i - 1].kind;
    if (startsRun && kFirstRow[static_cast<size_t>(kTable[i].kind)] != i) return false;
  }
  return true;
}
static_assert(rowsAdjacent(), "the rows of one collective must be adjacent in kTable");

struct AlgorithmList {
  CollectiveKind kind;
  std::span<const char* const> names;
};

constexpr const char* kBarrierAlgorithms[] = {"board", "dissemination"};
constexpr const char* kBroadcastAlgorithms[] = {"board", "binomial", "scatter_all_gather"};
constexpr const char* kAllGatherAlgorithms[] = {"board", "recursive_doubling", "bruck", "ring"};
constexpr const char* kGatherAlgorithms[] = {"board", "binomial", "linear"};
constexpr const char* kScatterAlgorithms[] = {"board", "binomial", "linear"};
constexpr const char* kAllToAllAlgorithms[] = {"board", "pairwise"};
constexpr const char* kAllReduceAlgorithms[] = {"board", "recursive_doubling", "rabenseifner", "ring"};
constexpr const char* kReduceAlgorithms[] = {"board", "binomial", "reduce_scatter_gather"};
constexpr const char* kReduceScatterAlgorithms[] = {"board", "recursive_halving", "ring"};

constexpr AlgorithmList kAlgorithms[] = {
    {CollectiveKind::kBarrier, kBarrierAlgorithms},
    {CollectiveKind::kBroadcast, kBroadcastAlgorithms},
    {CollectiveKind::kAllGather, kAllGatherAlgorithms},
    {CollectiveKind::kAllGatherV, kAllGatherAlgorithms},
    {CollectiveKind::kGather, kGatherAlgorithms},
    {CollectiveKind::kGatherV, kGatherAlgorithms},
    {CollectiveKind::kScatter, kScatterAlgorithms},
    {CollectiveKind::kScatterV, kScatterAlgorithms},
    {CollectiveKind::kAllToAllSingle, kAllToAllAlgorithms},
    {CollectiveKind::kAllToAll, kAllToAllAlgorithms},
    {CollectiveKind::kAllReduce, kAllReduceAlgorithms},
    {CollectiveKind::kReduce, kReduceAlgorithms},
    {CollectiveKind::kReduceScatter, kReduceScatterAlgorithms},
    {CollectiveKind::kReduceScatterV, kReduceScatterAlgorithms},
};

}  // namespace

std::span<const Rule> selectionTable() { return kTable; }

std::span<const char* const> algorithmsOf(CollectiveKind kind) {
  for (const AlgorithmList& list : kAlgorithms) {
    if (list.kind == kind) return list.names;
  }
  return {};
}

std::string_view decide(CollectiveContext& ctx, size_t bytes) {
  auto kind = static_cast<CollectiveKind>(ctx.signature().kind);
  const std::string& forced = ctx.communicator().world().algorithmOverride(kind);
  // Every rank decides alike: whether the communicator has a board, and
  // the size, are the same everywhere (all_to_all sorts it out on the board).
  if (!forced.empty() && (forced != kBoard || (ctx.hasBoard() && bytes <= kBoardBytes && ctx.size() <= kBoardRanks))) {
    for (std::string_view name : algorithmsOf(kind)) {
      if (forced == name) {
        log::debug("{} of {} bytes on {} ranks: {} (set by COMM_ALGO)", core::collectiveName(kind), bytes, ctx.size(),
                   name);
        return name;
      }
    }
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO names '{}' for {}, which has no such algorithm", forced,
         core::collectiveName(kind));
  }
  for (size_t row = kFirstRow[static_cast<size_t>(kind)]; row < std::size(kTable) && kTable[row].kind == kind; ++row) {
    const Rule& rule = kTable[row];
    if (bytes > rule.maxBytes || ctx.size() > rule.maxRanks) continue;
    if (rule.algorithm == kBoard && !ctx.hasBoard()) continue;
    if (rule.withoutBoard && ctx.hasBoard()) continue;
    if (log::enabled(log::Level::kDebug)) {  // collectiveName is not free
      log::debug("{} of {} bytes on {} ranks: {}", core::collectiveName(kind), bytes, ctx.size(), rule.algorithm);
    }
    return rule.algorithm;
  }
  fail(COMM_ERR_INTERNAL, "the selection table has no row for {}", core::collectiveName(kind));
}

}  // namespace comm::algo
