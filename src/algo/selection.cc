#include "algo/selection.h"

#include <algorithm>
#include <limits>

#include "core/communicator.h"
#include "core/error.h"
#include "core/log.h"

namespace comm::algo {
namespace {

using core::CollectiveKind;
constexpr size_t kAnyBytes = std::numeric_limits<size_t>::max();
constexpr int kAnyRanks = std::numeric_limits<int>::max();

// Rows are tried in order; the first whose limits hold wins. The sizes come
// from measurements on one node (docs/algorithms.md explains each).
constexpr Rule kTable[] = {
    {CollectiveKind::kBarrier, kAnyBytes, kAnyRanks, "dissemination"},
    {CollectiveKind::kBroadcast, 128 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kBroadcast, kAnyBytes, 2, "binomial"},
    {CollectiveKind::kBroadcast, kAnyBytes, kAnyRanks, "scatter_all_gather"},
    {CollectiveKind::kAllGather, 256 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllGather, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kAllGatherV, 256 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllGatherV, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kGather, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kGather, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kGatherV, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kGatherV, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kScatter, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kScatter, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kScatterV, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kScatterV, kAnyBytes, kAnyRanks, "linear"},
    {CollectiveKind::kAllToAllSingle, kAnyBytes, kAnyRanks, "pairwise"},
    {CollectiveKind::kAllToAll, kAnyBytes, kAnyRanks, "pairwise"},
    {CollectiveKind::kAllReduce, 16 * 1024, kAnyRanks, "recursive_doubling"},
    {CollectiveKind::kAllReduce, 512 * 1024, kAnyRanks, "rabenseifner"},
    {CollectiveKind::kAllReduce, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kReduce, 64 * 1024, kAnyRanks, "binomial"},
    {CollectiveKind::kReduce, kAnyBytes, kAnyRanks, "reduce_scatter_gather"},
    {CollectiveKind::kReduceScatter, 64 * 1024, kAnyRanks, "recursive_halving"},
    {CollectiveKind::kReduceScatter, kAnyBytes, kAnyRanks, "ring"},
    {CollectiveKind::kReduceScatterV, 64 * 1024, kAnyRanks, "recursive_halving"},
    {CollectiveKind::kReduceScatterV, kAnyBytes, kAnyRanks, "ring"},
};

struct AlgorithmList {
  CollectiveKind kind;
  std::span<const char* const> names;
};

constexpr const char* kBarrierAlgorithms[] = {"dissemination"};
constexpr const char* kBroadcastAlgorithms[] = {"binomial", "scatter_all_gather"};
constexpr const char* kAllGatherAlgorithms[] = {"recursive_doubling", "bruck", "ring"};
constexpr const char* kGatherAlgorithms[] = {"binomial", "linear"};
constexpr const char* kScatterAlgorithms[] = {"binomial", "linear"};
constexpr const char* kAllToAllAlgorithms[] = {"pairwise"};
constexpr const char* kAllReduceAlgorithms[] = {"recursive_doubling", "rabenseifner", "ring"};
constexpr const char* kReduceAlgorithms[] = {"binomial", "reduce_scatter_gather"};
constexpr const char* kReduceScatterAlgorithms[] = {"recursive_halving", "ring"};

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

const char* choose(CollectiveContext& ctx, size_t bytes) {
  auto kind = static_cast<CollectiveKind>(ctx.signature().kind);
  const char* collective = core::collectiveName(kind);
  const std::string& forced = ctx.communicator().world().algorithmOverride(collective);
  if (!forced.empty()) {
    for (const char* name : algorithmsOf(kind)) {
      if (forced == name) {
        log::debug("{} of {} bytes on {} ranks: {} (set by COMM_ALGO)", collective, bytes, ctx.size(), name);
        return name;
      }
    }
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO names '{}' for {}, which has no such algorithm", forced, collective);
  }
  for (const Rule& rule : kTable) {
    if (rule.kind == kind && bytes <= rule.maxBytes && ctx.size() <= rule.maxRanks) {
      log::debug("{} of {} bytes on {} ranks: {}", collective, bytes, ctx.size(), rule.algorithm);
      return rule.algorithm;
    }
  }
  fail(COMM_ERR_INTERNAL, "the selection table has no row for {}", collective);
}

}  // namespace comm::algo
