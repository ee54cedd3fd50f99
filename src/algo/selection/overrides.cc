#include "algo/selection/overrides.h"

#include <optional>
#include <string>

#include "algo/selection/registry.h"
#include "common/error.h"

namespace comm::algo {

core::AlgorithmOverrides parseAlgorithmOverrides(std::string_view setting) {
  core::AlgorithmOverrides overrides;
  while (!setting.empty()) {
    size_t comma = setting.find(',');
    std::string_view item = setting.substr(0, comma);
    setting = comma == std::string_view::npos ? std::string_view() : setting.substr(comma + 1);
    if (item.empty()) continue;
    size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == item.size()) {
      fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO entry '{}' is not collective:algorithm", item);
    }
    std::optional<core::CollectiveKind> kind = core::collectiveNamed(item.substr(0, colon));
    if (!kind) {
      fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO entry '{}' names no collective (all_reduce, broadcast, ...)", item);
    }
    std::string_view algorithm = item.substr(colon + 1);
    const CollectiveTable& table = tableOf(*kind);
    if (table.indexOf(algorithm) < 0) {
      std::string names;
      for (const AlgorithmInfo& info : table.algorithms)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", info.name);
      fail(COMM_ERR_INVALID_ARGUMENT, "COMM_ALGO entry '{}': {} has no algorithm '{}' (it has {})", item,
           core::collectiveName(*kind), algorithm, names);
    }
    overrides[static_cast<size_t>(*kind)] = std::string(algorithm);
  }
  return overrides;
}

}  // namespace comm::algo
