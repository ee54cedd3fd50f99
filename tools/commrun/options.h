// commrun's command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace commrun {

// The store's port in a --hosts job without --master-port, as torchrun's.
inline constexpr uint16_t kHostsPort = 29500;

struct Options {
  int ranksPerNode = 0;
  int nodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  uint16_t masterPort = 0;  // 0: node 0 picks a free one (single node only; --hosts: kHostsPort)
  std::optional<std::filesystem::path> logDir;
  bool bindCore = false;
  std::optional<double> timeoutSeconds;
  double graceSeconds = 3;
  bool keepGoing = false;            // a failed rank leaves the others running
  int replace = 0;                   // --replace: the most failed ranks this commrun replaces (implies keepGoing)
  std::vector<std::string> command;  // program and its arguments
  // --hosts / --hostfile: start one commrun per host, through the agent.
  std::vector<std::string> hosts;
  std::string launcherAgent = "ssh";

  int worldSize() const { return nodes * ranksPerNode; }
  bool hostsStore() const { return nodeRank == 0; }
  bool acrossHosts() const { return !hosts.empty(); }
};

// Thrown after --help or a usage error was printed: commrun exits with `code`.
struct UsageExit {
  int code;
};

Options parseOptions(int argc, char** argv);

}  // namespace commrun
