// commrun's command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace commrun {

struct Options {
  int ranksPerNode = 0;
  int nodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  uint16_t masterPort = 0;  // 0: node 0 picks a free one (single node only)
  std::optional<std::filesystem::path> logDir;
  bool bindCore = false;
  std::optional<double> timeoutSeconds;
  double graceSeconds = 3;
  std::vector<std::string> command;  // program and its arguments

  int worldSize() const { return nodes * ranksPerNode; }
  bool hostsStore() const { return nodeRank == 0; }
};

// Thrown after --help or a usage error was printed: commrun exits with `code`.
struct UsageExit {
  int code;
};

Options parseOptions(int argc, char** argv);

}  // namespace commrun
