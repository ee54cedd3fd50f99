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
};

struct AlgorithmList {
  CollectiveKind kind;
  std::span<const char* const> names;
};

constexpr const char* kBarrierAlgorithms[] = {"dissemination"};

constexpr AlgorithmList kAlgorithms[] = {
    {CollectiveKind::kBarrier, kBarrierAlgorithms},
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
