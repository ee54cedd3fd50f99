// comm-bench's result files: --json (the run's settings and every row, with
// the per-rank min/avg/max), --csv (the table's columns), and reading either
// back for --plot.
#pragma once

#include <string>
#include <vector>

#include "result.h"
#include "run_info.h"

namespace commbench {

void writeJson(const std::string& path, const RunInfo& run, const std::vector<Row>& rows);
void writeCsv(const std::string& path, const RunInfo& run, const std::vector<Row>& rows);

// One line of a plot: busbw (GB/s) against size (bytes).
struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;
};

// The out-of-place busbw of every dtype/op in a result file (JSON or CSV,
// told apart by content), one series each. Throws std::runtime_error naming
// the file when it cannot be read.
std::vector<Series> readSeries(const std::string& path);

}  // namespace commbench
