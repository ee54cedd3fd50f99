// Copies a rank's output stream to commrun's, one whole line at a time with
// the rank's prefix, so that lines of different ranks never interleave.
#pragma once

#include <string>
#include <string_view>

namespace commrun {

class LineRelay {
 public:
  // `logFd` (-1 for none) receives the same lines without the prefix.
  LineRelay(std::string prefix, int outputFd, int logFd);

  // Bytes as they arrive; complete lines are written at once, the rest waits.
  void feed(std::string_view bytes);
  // End of stream: writes a last line that had no newline.
  void finish();
  // The last whole line written, without the prefix.
  const std::string& lastLine() const { return lastLine_; }

 private:
  void emit(std::string_view line);
  void flush();

  std::string prefix_;
  int outputFd_;
  int logFd_;
  std::string partial_;
  std::string lastLine_;
  std::string outputBatch_;
  std::string logBatch_;
};

// write() until done, waiting out a non-blocking descriptor. Returns false
// when the descriptor fails (a closed pipe): the output is then dropped.
bool writeAll(int fd, std::string_view bytes);

}  // namespace commrun
