#include "core/signature.h"

#include <fmt/format.h>

#include "common/dtype.h"

namespace comm::core {
namespace {

constexpr const char* kNames[] = {"?",          "barrier",        "all_reduce",       "reduce",   "broadcast",
                                  "all_gather", "reduce_scatter", "gather",           "scatter",  "all_to_all_single",
                                  "all_to_all", "all_gather_v",   "reduce_scatter_v", "gather_v", "scatter_v"};

}  // namespace

static_assert(std::size(kNames) == kCollectiveKinds);

const char* collectiveName(CollectiveKind kind) {
  auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "?";
}

std::optional<CollectiveKind> collectiveNamed(std::string_view name) {
  for (size_t index = 1; index < std::size(kNames); ++index) {
    if (name == kNames[index]) return static_cast<CollectiveKind>(index);
  }
  return std::nullopt;
}

std::string describe(const Signature& s) {
  std::string text = collectiveName(static_cast<CollectiveKind>(s.kind));
  if (s.dtype >= 0) text += fmt::format(" {}", dtypeName(static_cast<comm_dtype_t>(s.dtype)));
  if (s.count >= 0) text += fmt::format(" x {}", s.count);
  if (s.op >= 0) text += fmt::format(" {}", opName(static_cast<comm_op_t>(s.op)));
  if (s.root >= 0) text += fmt::format(" root {}", s.root);
  if (s.extra != 0) text += fmt::format(" (layout {:x})", s.extra);
  if (s.memory == kMemoryDevice) text += " in device memory";
  return text;
}

std::string describeCall(const Signature& signature, uint32_t sequence, std::string_view communicator) {
  return fmt::format("comm_{} (#{} on {})", collectiveName(static_cast<CollectiveKind>(signature.kind)), sequence,
                     communicator);
}

}  // namespace comm::core
