// The table comm-bench prints (rank 0 only), with nccl-tests' columns:
// size, count, type, redop, root, then time, algbw, busbw and #wrong out of
// place, then the same four in place.
#pragma once

#include <vector>

#include "result.h"
#include "run_info.h"

namespace commbench {

class Table {
 public:
  explicit Table(const RunInfo& run) : run_(run) {}

  void printHeader() const;
  void printRow(const Row& row) const;
  // Total #wrong and the average busbw, like nccl-tests' last lines.
  void printFooter(const std::vector<Row>& rows) const;

 private:
  const RunInfo& run_;
};

// "sum", or "none" for collectives without an op.
const char* opColumn(const Row& row);

}  // namespace commbench
