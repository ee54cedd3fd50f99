#include "options.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "collectives.h"
#include "units.h"
#include "values.h"

namespace commbench {
namespace {

constexpr comm_dtype_t kDtypes[] = {COMM_INT8,    COMM_UINT8,   COMM_INT16,  COMM_UINT16,  COMM_INT32,
                                    COMM_UINT32,  COMM_INT64,   COMM_UINT64, COMM_FLOAT16, COMM_BFLOAT16,
                                    COMM_FLOAT32, COMM_FLOAT64, COMM_BOOL};
constexpr comm_op_t kOps[] = {COMM_OP_SUM, COMM_OP_PROD, COMM_OP_MIN, COMM_OP_MAX,
                              COMM_OP_AVG, COMM_OP_BAND, COMM_OP_BOR, COMM_OP_BXOR};

// nccl-tests' names for the dtypes comm names differently.
const std::map<std::string, comm_dtype_t> kDtypeAliases = {
    {"float", COMM_FLOAT32}, {"half", COMM_FLOAT16}, {"double", COMM_FLOAT64}, {"bf16", COMM_BFLOAT16},
    {"int", COMM_INT32},     {"uint", COMM_UINT32},  {"char", COMM_INT8},      {"fp16", COMM_FLOAT16},
    {"fp32", COMM_FLOAT32},  {"fp64", COMM_FLOAT64}};

std::vector<comm_dtype_t> parseDtypes(const std::string& text) {
  if (text == "all") return {std::begin(kDtypes), std::end(kDtypes)};
  for (comm_dtype_t d : kDtypes) {
    if (text == comm_dtype_name(d)) return {d};
  }
  if (auto alias = kDtypeAliases.find(text); alias != kDtypeAliases.end()) return {alias->second};
  throw CLI::ValidationError("-d", fmt::format("unknown dtype '{}' (int8 ... float64, bool, float, half, "
                                               "double, or all)",
                                               text));
}

std::vector<comm_op_t> parseOps(const std::string& text) {
  if (text == "all") return {std::begin(kOps), std::end(kOps)};
  for (comm_op_t o : kOps) {
    if (text == comm_op_name(o)) return {o};
  }
  throw CLI::ValidationError("-o",
                             fmt::format("unknown op '{}' (sum, prod, min, max, avg, band, bor, bxor, or all)", text));
}

Aggregate parseAggregate(const std::string& text) {
  static const std::map<std::string, Aggregate> names = {
      {"0", Aggregate::kRank0}, {"rank0", Aggregate::kRank0}, {"1", Aggregate::kAvg}, {"avg", Aggregate::kAvg},
      {"2", Aggregate::kMin},   {"min", Aggregate::kMin},     {"3", Aggregate::kMax}, {"max", Aggregate::kMax}};
  auto found = names.find(text);
  if (found == names.end()) throw CLI::ValidationError("-a", "expected rank0, avg, min or max (or 0, 1, 2, 3)");
  return found->second;
}

size_t parseSize(const std::string& text, const char* option) {
  try {
    return parseBytes(text);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(option, e.what());
  }
}

std::string collectiveList() {
  std::string names;
  for (const Collective& c : collectives()) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
  return names;
}

}  // namespace

int automaticIterations(size_t bytes) {
  constexpr size_t kBytesPerSize = 256u << 20;
  return static_cast<int>(std::clamp<size_t>(kBytesPerSize / std::max<size_t>(bytes, 1), 10, 1000));
}

const char* aggregateName(Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kRank0: return "rank 0";
    case Aggregate::kMin: return "min over ranks";
    case Aggregate::kAvg: return "avg over ranks";
    case Aggregate::kMax: return "max over ranks";
  }
  return "?";
}

Options parseOptions(int argc, char** argv) {
  Options options;
  CLI::App app(
      "Measure a comm collective over a range of sizes, the way nccl-tests does:\n"
      "  commrun -n N comm-bench COLLECTIVE [options]\n"
      "  comm-bench --plot OUT.svg|OUT.png RESULT.json [RESULT.json|.csv ...]   (no ranks needed)\n"
      "Sizes are nccl-tests bytes: the per-rank buffer for all_reduce, reduce, broadcast and send_recv; the whole\n"
      "output of all_gather and gather; the whole input of reduce_scatter, scatter (root) and all_to_all.\n"
      "Collectives: " +
          collectiveList(),
      "comm-bench");
  app.set_version_flag("--version", std::string("comm-bench ") + comm_version_string(), "print the version and exit");
  std::string minBytes = "8", maxBytes = "64M", sizeList, dtype = "float32", op = "sum", iterations = "20",
              aggregate = "rank0";
  int check = 1;
  app.add_option("collective", options.collective, "the collective to measure");
  app.add_option("-b,--minbytes", minBytes, "smallest size (K, M, G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", maxBytes, "largest size (K, M, G suffixes)")->capture_default_str();
  size_t factor = 2;
  app.add_option("-f,--stepfactor", factor, "multiply the size by this between rows")
      ->check(CLI::Range(size_t{2}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--sizes", sizeList, "comma-separated sizes to measure instead of -b/-e/-f (8,64K,1M)");
  app.add_option("-d,--datatype", dtype, "dtype: int8 ... float64, bool (or nccl-tests' float, half...), or all")
      ->capture_default_str();
  app.add_option("-o,--op", op, "reduce op: sum, prod, min, max, avg, band, bor, bxor, or all")->capture_default_str();
  app.add_option("-r,--root", options.root, "root rank of reduce, broadcast, gather and scatter")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-n,--iters", iterations,
                 "timed iterations per size, or 'auto': 256 MiB per size, between 10 and 1000 iterations")
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", options.warmup, "untimed iterations before them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-c,--check", check, "1: check every result against the expected values (#wrong), 0: do not")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  app.add_option("-a,--average", aggregate,
                 "time shown: rank0, or min/avg/max over ranks of each rank's median (nccl-tests' 0/1/2/3: "
                 "rank0/avg/min/max)")
      ->capture_default_str();
  bool blockingCalls = false;
  auto* blocking = app.add_flag("--blocking", blockingCalls, "blocking calls (the default)");
  app.add_flag("--async", options.async, "start each call with a handle, then wait for it")->excludes(blocking);
  app.add_flag("--stream", options.stream,
               "order every call on a CUDA stream (comm_set_stream; needs --memory cuda): it returns at once and is "
               "timed until the stream has passed it");
  std::string memory = "host";
  app.add_option("--memory", memory, "where the tensors live: host, or cuda (device memory; docs/cuda.md)")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  app.add_option("--provider", options.provider,
                 "network transport for the peers direct shared memory does not serve (tcp, tcp;ofi_rxm, shm...; with "
                 "COMM_SHM=0 every peer); default: COMM_PROVIDER or comm's choice");
  app.add_option("--json", options.jsonPath, "also write the results to FILE as JSON");
  app.add_option("--csv", options.csvPath, "also write the table to FILE as CSV");
  std::vector<std::string> plot;
  app.add_option("--plot", plot, "OUT.svg|OUT.png FILE...: draw busbw against size from result files (gnuplot)")
      ->expected(2, CLI::detail::expected_max_vector_size);

  try {
    app.parse(argc, argv);
    if (!plot.empty()) {
      options.plotPath = plot.front();
      options.plotInputs.assign(plot.begin() + 1, plot.end());
      return options;
    }
    if (options.collective.empty()) throw CLI::RequiredError("collective (or --plot)");
    const Collective* collective = findCollective(options.collective);
    if (collective == nullptr) {
      throw CLI::ValidationError(
          "collective", fmt::format("unknown collective '{}'; one of {}", options.collective, collectiveList()));
    }
    options.collective = std::string(collective->name);
    if (sizeList.empty()) {
      size_t low = parseSize(minBytes, "-b"), high = parseSize(maxBytes, "-e");
      if (low > high) throw CLI::ValidationError("-b", "is larger than -e");
      for (size_t bytes = low; bytes <= high; bytes = std::max(bytes * factor, bytes + 1)) {
        options.sizes.push_back(bytes);
      }
      options.sizesText = fmt::format("{} to {} (x{})", formatBytes(low), formatBytes(high), factor);
    } else {
      std::stringstream list(sizeList);
      for (std::string size; std::getline(list, size, ',');) options.sizes.push_back(parseSize(size, "--sizes"));
      std::sort(options.sizes.begin(), options.sizes.end());
      options.sizes.erase(std::unique(options.sizes.begin(), options.sizes.end()), options.sizes.end());
      for (size_t size : options.sizes) {
        options.sizesText += fmt::format("{}{}", options.sizesText.empty() ? "" : ", ", formatBytes(size));
      }
    }
    options.dtypes = parseDtypes(dtype);
    options.ops = parseOps(op);
    if (iterations == "auto") {
      options.iterations.reset();
    } else {
      int count = 0;
      auto [end, error] = std::from_chars(iterations.data(), iterations.data() + iterations.size(), count);
      if (error != std::errc() || end != iterations.data() + iterations.size() || count <= 0) {
        throw CLI::ValidationError("-n", "expected a positive number or 'auto'");
      }
      options.iterations = count;
    }
    options.check = check == 1;
    options.memory = memory == "cuda" ? COMM_MEMORY_CUDA : COMM_MEMORY_HOST;
    if (options.stream && options.memory != COMM_MEMORY_CUDA) {
      throw CLI::ValidationError("--stream", "orders calls on device memory only: add --memory cuda");
    }
    options.aggregate = parseAggregate(aggregate);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    throw UsageExit{code == 0 ? 0 : 2};
  }
  return options;
}

}  // namespace commbench
