// One row of comm-bench's table: a size, dtype and op, measured out of place
// and in place.
#pragma once

#include <cstdint>
#include <optional>

#include "comm.h"

namespace commbench {

struct Measurement {
  double timeUs;  // the time the table shows (rank 0's median, or -a's aggregate)
  // Over ranks, of each rank's median per-iteration time.
  double minUs;
  double avgUs;
  double maxUs;
  std::optional<int64_t> wrong;  // summed over ranks; empty when not checked
};

struct Row {
  size_t bytes;  // nccl-tests size
  size_t count;  // nccl-tests count: elements per rank (per block)
  comm_dtype_t dtype;
  std::optional<comm_op_t> op;  // empty for collectives without one
  int root;                     // -1 for collectives without one
  int iterations;
  std::optional<Measurement> outOfPlace;
  std::optional<Measurement> inPlace;  // empty where comm has no in-place form
};

// GB/s (1e9 bytes per second) of `bytes` moved in `timeUs`.
inline double algbw(size_t bytes, double timeUs) {
  return timeUs > 0 ? static_cast<double>(bytes) / (timeUs * 1e3) : 0.0;
}

}  // namespace commbench
