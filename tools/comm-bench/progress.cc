#include "progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace commbench {

Progress::Progress(size_t totalRows, bool enabled)
    : totalRows_(totalRows), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { clear(); }

bool Progress::stderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void Progress::starting(size_t index, const std::string& description) {
  if (!enabled_) return;
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_);
  // \r and "erase to end of line" redraw in place, whatever was there before.
  fmt::print(stderr, "\r\033[Kcomm-bench: row {}/{}, measuring {} ({} s)", index + 1, totalRows_, description,
             elapsed.count());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace commbench
