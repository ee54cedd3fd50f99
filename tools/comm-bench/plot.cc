#include "plot.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "result_files.h"
#include "units.h"

namespace commbench {
namespace {

// A gnuplot single-quoted string: only ' needs escaping, by doubling it.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Tics at powers of two across the sizes present, labelled "64 KiB", at
// most about a dozen of them.
std::string sizeTics(const std::vector<Series>& series) {
  double low = 0, high = 0;
  for (const Series& s : series) {
    for (auto [size, busbw] : s.points) {
      low = low == 0 ? size : std::min(low, size);
      high = std::max(high, size);
    }
  }
  int first = static_cast<int>(std::floor(std::log2(low)));
  int last = static_cast<int>(std::ceil(std::log2(high)));
  int step = std::max(1, (last - first + 11) / 12);
  std::string tics;
  for (int p = first; p <= last; p += step) {
    tics += fmt::format("{}'{}' {}", tics.empty() ? "" : ", ", formatBytes(size_t{1} << p), std::ldexp(1.0, p));
  }
  return tics;
}

// The gnuplot terminal for `outPath`: SVG for *.svg (text, so a test or a
// script can read the series back), else PNG.
std::string terminal(const std::string& outPath) {
  if (outPath.ends_with(".svg") || outPath.ends_with(".SVG")) {
    return "set terminal svg size 1100,650 noenhanced font ',11'\n";
  }
  // pngcairo draws smoother lines; plain png (libgd) is the fallback where
  // gnuplot was built without cairo.
  return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
         "  set terminal pngcairo size 1100,650 noenhanced font ',11'\n"
         "} else {\n"
         "  set terminal png size 1100,650 noenhanced\n"
         "}\n";
}

std::string script(const std::string& outPath, const std::vector<Series>& series) {
  std::string s = terminal(outPath);
  s += fmt::format(
      "set output {}\n"
      "set title 'comm-bench: bus bandwidth (out of place)'\n"
      "set xlabel 'size (bytes, nccl-tests convention)'\n"
      "set ylabel 'busbw (GB/s)'\n"
      "set logscale x 2\n"
      "set xtics ({})\n"
      "set grid\n"
      "set key below\n",
      quoted(outPath), sizeTics(series));
  for (size_t i = 0; i < series.size(); ++i) {
    s += fmt::format("$series{} << EOD\n", i);
    for (auto [size, busbw] : series[i].points) s += fmt::format("{} {}\n", size, busbw);
    s += "EOD\n";
  }
  s += "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    s += fmt::format("{}$series{} using 1:2 with linespoints linewidth 2 title {}", i == 0 ? "" : ", \\\n     ", i,
                     quoted(series[i].label));
  }
  return s + "\n";
}

}  // namespace

void plot(const std::string& outPath, const std::vector<std::string>& inputs) {
  std::vector<Series> series;
  for (const std::string& input : inputs) {
    for (Series& s : readSeries(input)) {
      // A log axis has no place for size 0.
      std::erase_if(s.points, [](const auto& point) { return point.first <= 0; });
      if (!s.points.empty()) series.push_back(std::move(s));
    }
  }
  if (series.empty()) throw std::runtime_error("--plot: the result files hold no measured rows");

  struct Close {
    int* status;
    void operator()(FILE* f) const { *status = pclose(f); }
  };
  int status = -1;
  {
    std::unique_ptr<FILE, Close> gnuplot(popen("gnuplot", "w"), Close{&status});
    if (!gnuplot) throw std::runtime_error("--plot: cannot start gnuplot");
    std::string text = script(outPath, series);
    std::fwrite(text.data(), 1, text.size(), gnuplot.get());
  }
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
    throw std::runtime_error("--plot: gnuplot did not run; install it (Debian: apt-get install gnuplot-nox)");
  }
  if (WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        fmt::format("--plot: gnuplot failed (exit {}) drawing '{}'", WEXITSTATUS(status), outPath));
  }
}

}  // namespace commbench
