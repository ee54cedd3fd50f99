#include "algorithm_table.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "algo/selection/registry.h"

namespace {

// The traits a row sets, in words, as " [a, b]"; "" when it sets none.
std::string traitsOf(const comm::algo::AlgorithmInfo& algorithm) {
  std::string traits;
  auto add = [&](bool set, const char* words) {
    if (set) traits += fmt::format("{}{}", traits.empty() ? " [" : ", ", words);
  };
  add(algorithm.ordersRanksItself, "orders ranks itself");
  add(algorithm.takesHooks, "takes hooks");
  return traits.empty() ? traits : traits + "]";
}

}  // namespace

int printAlgorithms() {
  fmt::print(
      "Algorithm table (per collective: index : name : what it does [traits]); COMM_ALGO=collective:name forces\n"
      "one where it can run, and comm-info without options prints the rules that choose among them:\n");
  size_t width = 0;
  for (const comm::algo::CollectiveTable* table : comm::algo::collectiveTables()) {
    for (const comm::algo::AlgorithmInfo& algorithm : table->algorithms) width = std::max(width, algorithm.name.size());
  }
  for (const comm::algo::CollectiveTable* table : comm::algo::collectiveTables()) {
    fmt::print("  {}\n", comm::core::collectiveName(table->kind));
    for (size_t i = 0; i < table->algorithms.size(); ++i) {
      const comm::algo::AlgorithmInfo& algorithm = table->algorithms[i];
      fmt::print("    {:>2} : {:<{}} : {}{}\n", i, algorithm.name, width, algorithm.summary, traitsOf(algorithm));
    }
  }
  return 0;
}
