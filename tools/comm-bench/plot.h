// --plot: busbw against size for one or several result files, drawn by
// gnuplot (Debian gnuplot-nox) into a PNG.
#pragma once

#include <string>
#include <vector>

namespace commbench {

// Draws every series of `inputs` (comm-bench --json or --csv files) into
// `pngPath`. Throws std::runtime_error when a file cannot be read or gnuplot
// fails or is missing.
void plot(const std::string& pngPath, const std::vector<std::string>& inputs);

}  // namespace commbench
