#include "bootstrap/slurm_nodelist.h"

#include <algorithm>
#include <cctype>

namespace comm::bootstrap {

std::optional<std::string> firstSlurmHost(std::string_view list) {
  std::string host;
  size_t at = 0;
  while (at < list.size() && list[at] != ',') {
    if (list[at] == ']') return std::nullopt;
    if (list[at] != '[') {
      host += list[at++];
      continue;
    }
    const size_t close = list.find(']', at);
    if (close == std::string_view::npos) return std::nullopt;
    // "[01-04,07]": the first range's first number.
    const std::string_view inside = list.substr(at + 1, close - at - 1);
    const std::string_view first = inside.substr(0, inside.find_first_of(",-"));
    if (first.empty() || !std::all_of(first.begin(), first.end(), [](char c) { return std::isdigit(c) != 0; })) {
      return std::nullopt;
    }
    host += first;
    at = close + 1;
  }
  if (host.empty()) return std::nullopt;
  return host;
}

}  // namespace comm::bootstrap
