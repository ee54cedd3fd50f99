// comm-bench: nccl-tests for comm. Measures one collective over a range of
// sizes and prints nccl-tests' table (rank 0), optionally checking every
// result and writing JSON/CSV; --plot draws result files with gnuplot (SVG or
// PNG); on a terminal, rank 0 shows the sweep's progress on stderr.
//   commrun -n 2 comm-bench all_reduce -b 8 -e 64M -f 2 -d float32 -o sum
//   comm-bench --plot busbw.svg shm.json tcp.json
// It uses the public C API only, like any other comm program.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "api.h"
#include "benchmark.h"
#include "options.h"
#include "plot.h"
#include "progress.h"
#include "result_files.h"
#include "table.h"
#include "units.h"

namespace commbench {
namespace {

Owned<comm_t> initialize(const Options& options) {
  comm_config_t* rawConfig = nullptr;
  check(comm_config_create(&rawConfig), "comm_config_create");
  Owned<comm_config_t> config(rawConfig);
  if (!options.provider.empty())
    check(comm_config_set(config.get(), "provider", options.provider.c_str()), "--provider");
  comm_t* world = nullptr;
  check(comm_init(&world, config.get()), "comm_init");
  return Owned<comm_t>(world);
}

std::string providerName(const Options& options) {
  if (!options.provider.empty()) return options.provider;
  const char* fromEnvironment = std::getenv("COMM_PROVIDER");
  return fromEnvironment != nullptr && *fromEnvironment != '\0' ? fromEnvironment : "default";
}

// The (dtype, op) pairs a sweep measures, in order: every op of a reducing
// collective that is defined for the dtype, or no op.
std::vector<std::pair<comm_dtype_t, std::optional<comm_op_t>>> sweepKinds(const Collective& collective,
                                                                          const Options& o) {
  std::vector<std::pair<comm_dtype_t, std::optional<comm_op_t>>> kinds;
  for (comm_dtype_t dtype : o.dtypes) {
    if (!collective.reduces) {
      kinds.emplace_back(dtype, std::nullopt);
      continue;
    }
    for (comm_op_t op : o.ops) {
      if (opDefined(dtype, op)) kinds.emplace_back(dtype, op);
    }
  }
  return kinds;
}

// Every rank runs the same rows in the same order; rank 0 prints them.
std::vector<Row> measureAll(comm_t* world, const RunInfo& run, const Table& table, bool printing) {
  const Options& o = run.options;
  const Collective& collective = run.collective;
  Benchmark benchmark(world, collective, o);
  std::vector<Row> rows;
  if (!collective.sized) {
    rows.push_back(benchmark.measure(0, o.dtypes.front(), std::nullopt));
    if (printing) table.printRow(rows.back());
    return rows;
  }
  const auto kinds = sweepKinds(collective, o);
  Progress progress(kinds.size() * o.sizes.size(), printing && Progress::stderrIsTerminal());
  for (const auto& [dtype, op] : kinds) {
    for (size_t bytes : o.sizes) {
      progress.starting(rows.size(), fmt::format("{} {}{}{}", formatBytes(bytes), comm_dtype_name(dtype), op ? " " : "",
                                                 op ? comm_op_name(*op) : ""));
      rows.push_back(benchmark.measure(bytes, dtype, op));
      progress.clear();
      if (printing) table.printRow(rows.back());
    }
  }
  return rows;
}

int run(const Options& options) {
  Owned<comm_t> world = initialize(options);
  int rank = 0, ranks = 1;
  check(comm_rank(&rank, world.get()), "comm_rank");
  check(comm_size(&ranks, world.get()), "comm_size");
  if (options.root >= ranks) {
    if (rank == 0) fmt::print(stderr, "comm-bench: -r {} is not a rank of {} ranks\n", options.root, ranks);
    return 2;
  }
  RunInfo info{*findCollective(options.collective), options, ranks, providerName(options)};
  Table table(info);
  bool printing = rank == 0;
  if (printing) table.printHeader();
  std::vector<Row> rows = measureAll(world.get(), info, table, printing);
  if (printing) {
    table.printFooter(rows);
    if (!options.jsonPath.empty()) writeJson(options.jsonPath, info, rows);
    if (!options.csvPath.empty()) writeCsv(options.csvPath, info, rows);
  }
  // #wrong is summed over ranks, so every rank agrees on the exit status.
  for (const Row& row : rows) {
    for (const auto* m : {&row.outOfPlace, &row.inPlace}) {
      if (*m && (*m)->wrong.value_or(0) != 0) return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) {
  using namespace commbench;
  Options options;
  try {
    options = parseOptions(argc, argv);
  } catch (const UsageExit& exit) {
    return exit.code;
  }
  try {
    if (!options.plotPath.empty()) {
      plot(options.plotPath, options.plotInputs);
      fmt::print("wrote {}\n", options.plotPath);
      return 0;
    }
    return run(options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "comm-bench: {}\n", e.what());
    return 1;
  }
}
