// comm-info: what this build of comm is and how it would behave: version,
// features, every setting (default, current value and where it comes from),
// the algorithm selection table and the providers that work here; with
// --algorithms, every algorithm with its summary and traits
// (algorithm_table.h); with --hang-report, what ranks were doing when a job
// hung (hang_report.h); with --topology, the node's or the job's topology
// (job_topology.h).
//
// The settings come through the public API (comm_setting_info), the table
// comm_init reads. It links the engine statically (not only the public API)
// for the algorithm selection tables, the engine's own; printing them from
// the source of truth keeps it from ever going stale.
#include <rdma/fabric.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "algo/selection/registry.h"
#include "algorithm_table.h"
#include "comm.h"
#include "hang_report.h"
#include "job_topology.h"

namespace {

// Exits with the message of a failed call of the public API.
void check(comm_status_t status, const char* call) {
  if (status == COMM_OK) return;
  fmt::print(stderr, "comm-info: {} failed: {}\n", call, comm_last_error());
  std::exit(1);
}

void printSettings() {
  int count = 0;
  check(comm_setting_count(&count), "comm_setting_count");
  fmt::print("Settings (environment variable, default, current value):\n");
  for (int index = 0; index < count; ++index) {
    const char* key = nullptr;
    const char* defaultValue = nullptr;
    const char* help = nullptr;
    const char* value = nullptr;
    check(comm_setting_info(&key, &defaultValue, &help, &value, index), "comm_setting_info");
    std::string variable = "COMM_";
    for (const char* c = key; *c != '\0'; ++c)
      variable += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    fmt::print("  {:<24} default '{}'{}\n      {}\n", variable, defaultValue,
               value == nullptr ? "" : fmt::format(", now '{}' (set by environment ({}))", value, variable), help);
  }
}

std::string limit(size_t bytes) {
  if (bytes == std::numeric_limits<size_t>::max()) return "any size";
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("<= {} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("<= {} KiB", bytes >> 10);
  return fmt::format("<= {} B", bytes);
}

void printSelection() {
  fmt::print(
      "\nAlgorithm selection (per collective, the first rule that applies and whose algorithm can run wins;\n"
      "COMM_ALGO=collective:algorithm overrides where that algorithm can run; comm-info --algorithms describes\n"
      "each algorithm):\n");
  fmt::print("  {:<18} {:<14} {:<12} {}\n", "collective", "message", "ranks", "algorithm");
  for (const comm::algo::CollectiveTable* table : comm::algo::collectiveTables()) {
    for (const comm::algo::Rule& rule : table->rules) {
      std::string ranks = rule.maxRanks == comm::algo::kAnyRanks ? "any" : fmt::format("<= {}", rule.maxRanks);
      fmt::print("  {:<18} {:<14} {:<12} {}{}\n", comm::core::collectiveName(table->kind), limit(rule.maxBytes), ranks,
                 table->algorithms[rule.algorithm].name, rule.withoutBoard ? " (without a node board)" : "");
    }
  }
  fmt::print("\nAlgorithms per collective:\n");
  for (const comm::algo::CollectiveTable* table : comm::algo::collectiveTables()) {
    std::string names;
    for (const comm::algo::AlgorithmInfo& algorithm : table->algorithms) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", algorithm.name);
    }
    fmt::print("  {:<18} {}\n", comm::core::collectiveName(table->kind), names);
  }
}

void printFeatures() {
  int cuda = 0;
  comm_has_feature(&cuda, COMM_FEATURE_CUDA);
  if (!cuda) {
    fmt::print("CUDA device memory: no (not built)\n\n");
    return;
  }
  int devices = 0;
  const char* reason = "";
  comm_cuda_device_count(&devices, &reason);
  fmt::print("CUDA device memory: yes (built in); devices visible: {}{}{}\n\n", devices, *reason ? ": " : "", reason);
}

void printProviders() {
  const char* providers = nullptr;
  fmt::print("\nProviders COMM_PROVIDER can name here (libfabric {}.{}): ", FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()));
  if (comm_providers(&providers) == COMM_OK) {
    fmt::print("{}\n", providers);
  } else {
    fmt::print("unknown ({})\n", comm_last_error());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Print what this build of comm is and how it would behave here: version, features, every COMM_* setting "
      "(default, current value and where it comes from), the algorithm selection table and the libfabric "
      "providers that work on this machine. Run it with the environment of the job to see that job's settings.",
      "comm-info");
  bool algorithms = false;
  app.add_flag("--algorithms", algorithms,
               "print every algorithm of every collective (index in its table, name, what it does, traits) and exit");
  bool topology = false;
  app.add_flag("--topology", topology,
               "print this node's topology (NUMA domains, sockets, cores, NICs, GPUs, this process's NUMA domain and "
               "socket) and exit; started as the ranks of a job (commrun -n 4 comm-info --topology), the job's: "
               "which ranks share each node, NUMA domain and socket");
  app.set_version_flag("--version", std::string("comm-info ") + comm_version_string(), "print the version and exit");
  std::string hangReport;
  app.add_option("--hang-report", hangReport,
                 "merge the flight records ranks wrote to COMM_DEBUG_DIR=DIR on a timeout or a peer's failure, and "
                 "say which rank the others wait for")
      ->type_name("DIR");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    // Usage errors exit 2, as commrun's and comm-bench's do.
    return code == 0 ? 0 : 2;
  }
  if (!hangReport.empty()) return printHangReport(hangReport);
  if (topology) return printTopology();
  if (algorithms) return printAlgorithms();
  fmt::print("comm {} (C API {})\n\n", comm_version_string(), COMM_VERSION_NUMBER);
  printFeatures();
  printSettings();
  printSelection();
  printProviders();
  return 0;
}
