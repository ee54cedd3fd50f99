// comm-info --algorithms lists every registered row of every collective's
// selection table (algo/selection/registry.h), read here from the registry
// itself: under each collective's name, one line per algorithm in table
// order with its index, name, summary and exactly the traits it sets.
// usage: comm_info_algorithms_test PATH/TO/comm-info
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "algo/selection/registry.h"

namespace {

std::vector<std::string> outputOf(const std::string& command) {
  std::vector<std::string> lines;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return lines;
  std::string line;
  for (int c = fgetc(pipe); c != EOF; c = fgetc(pipe)) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    lines.push_back(line);
    line.clear();
  }
  if (pclose(pipe) != 0) lines.clear();
  return lines;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The problems with one row's line, "" when it lists the row as it is.
std::string checkRow(std::string_view line, size_t index, const comm::algo::AlgorithmInfo& algorithm) {
  const std::string start = fmt::format("    {:>2} : {}", index, algorithm.name);
  if (line.substr(0, start.size()) != start) return fmt::format("expected a line starting '{}'", start);
  const size_t summary = line.find(" : ", start.size());
  if (summary == std::string_view::npos ||
      line.substr(start.size(), summary - start.size()).find_first_not_of(' ') != std::string_view::npos) {
    return "the name is not followed by ' : '";
  }
  std::string_view rest = line.substr(summary + 3);
  if (rest.substr(0, algorithm.summary.size()) != algorithm.summary) return "the summary differs";
  std::string_view traits = rest.substr(algorithm.summary.size());
  if (contains(traits, "orders ranks itself") != algorithm.ordersRanksItself) return "ordersRanksItself differs";
  if (contains(traits, "takes hooks") != algorithm.takesHooks) return "takesHooks differs";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} PATH/TO/comm-info\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> lines = outputOf(fmt::format("'{}' --algorithms", argv[1]));
  if (lines.empty()) {
    fmt::print("FAILED: comm-info --algorithms printed nothing or failed\n");
    return 1;
  }
  int failures = 0, rows = 0;
  size_t at = 0;
  for (const comm::algo::CollectiveTable* table : comm::algo::collectiveTables()) {
    const std::string heading = fmt::format("  {}", comm::core::collectiveName(table->kind));
    while (at < lines.size() && lines[at] != heading) ++at;
    if (at == lines.size()) {
      fmt::print("FAILED: no '{}' heading (in table order)\n", heading);
      return 1;
    }
    ++at;
    for (size_t i = 0; i < table->algorithms.size(); ++i, ++at) {
      const comm::algo::AlgorithmInfo& algorithm = table->algorithms[i];
      std::string problem = at < lines.size() ? checkRow(lines[at], i, algorithm) : "the output ends";
      if (!problem.empty()) {
        fmt::print("FAILED: {} row {} ({}): {}\n", comm::core::collectiveName(table->kind), i, algorithm.name, problem);
        ++failures;
      }
      ++rows;
    }
    if (at < lines.size() && lines[at].rfind("    ", 0) == 0) {
      fmt::print("FAILED: {} lists more rows than its table has: '{}'\n", comm::core::collectiveName(table->kind),
                 lines[at]);
      ++failures;
    }
  }
  if (failures > 0) return 1;
  fmt::print("passed: comm-info --algorithms lists all {} rows of {} tables\n", rows,
             comm::algo::collectiveTables().size());
  return 0;
}
