// The progress line of a sweep: on a terminal, rank 0 keeps one line on
// stderr saying which row is being measured, so that a sweep that runs for
// minutes shows it is alive. It is cleared before each table row reaches
// stdout (the two often share the terminal) and at the end; where stderr is
// a file or a pipe (commrun's relay, CI logs) nothing is written at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace commbench {

class Progress {
 public:
  // `enabled`: this rank prints (rank 0) and stderr is a terminal.
  Progress(size_t totalRows, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Row `index` (0-based) of the sweep, described as "64 KiB float32 sum", starts.
  void starting(size_t index, const std::string& description);
  // Erase the line, e.g. before a table row is printed.
  void clear();

  // Whether stderr is a terminal: the default for `enabled`.
  static bool stderrIsTerminal();

 private:
  size_t totalRows_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace commbench
