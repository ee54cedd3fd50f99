// comm-bench's command line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "comm.h"

namespace commbench {

// Which rank's time a row shows: rank 0's, or the min/avg/max over ranks of
// every rank's own median (nccl-tests' -a 0/1/2/3 is rank0/avg/min/max).
enum class Aggregate { kRank0, kMin, kAvg, kMax };

struct Options {
  std::string collective;
  // The sizes to measure, ascending: -b to -e times -f, or --sizes.
  std::vector<size_t> sizes;
  std::string sizesText;  // how they were asked for, for the header
  std::vector<comm_dtype_t> dtypes{COMM_FLOAT32};
  std::vector<comm_op_t> ops{COMM_OP_SUM};
  int root = 0;
  std::optional<int> iterations = 20;  // empty: automatic, per size
  int warmup = 5;
  bool check = true;
  Aggregate aggregate = Aggregate::kRank0;
  bool async = false;
  // --stream: every call ordered on a CUDA stream of comm-bench's
  // (comm_set_stream): it returns at once, and is timed until the stream
  // has passed it. Device memory only.
  bool stream = false;
  // Where the tensors live: host memory, or (--memory cuda) the memory of
  // CUDA device local rank % devices.
  comm_memory_type_t memory = COMM_MEMORY_HOST;
  std::string provider;  // empty: COMM_PROVIDER or comm's default
  std::string jsonPath;
  std::string csvPath;
  std::string plotPath;  // --plot OUT.svg|OUT.png: draw plotInputs instead of measuring
  std::vector<std::string> plotInputs;
};

// Thrown instead of exiting so that main decides: help exits 0, a usage
// error 2 (keeping 1 for failed runs).
struct UsageExit {
  int code;
};

Options parseOptions(int argc, char** argv);

// Timed iterations at `bytes` for automatic iteration counts: about 256 MiB
// of data per size, at least 10 and at most 1000 iterations. bench/compare's
// MPI and Gloo programs use the same rule.
int automaticIterations(size_t bytes);

const char* aggregateName(Aggregate aggregate);

}  // namespace commbench
