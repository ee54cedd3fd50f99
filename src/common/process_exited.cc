#include "common/process_exited.h"

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace comm {

bool processExited(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  size_t end = line.rfind(") ");
  return end != std::string::npos && end + 2 < line.size() && (line[end + 2] == 'Z' || line[end + 2] == 'X');
}

}  // namespace comm
