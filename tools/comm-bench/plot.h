// --plot: busbw against size for one or several result files, drawn by
// gnuplot (Debian gnuplot-nox) into an SVG (OUT.svg) or a PNG (any other name).
#pragma once

#include <string>
#include <vector>

namespace commbench {

// Draws every series of `inputs` (comm-bench --json or --csv files) into
// `outPath`, as SVG when it ends in .svg, else as PNG. Throws
// std::runtime_error when a file cannot be read or gnuplot fails or is
// missing.
void plot(const std::string& outPath, const std::vector<std::string>& inputs);

}  // namespace commbench
