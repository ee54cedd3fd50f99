#include "exit_status.h"

#include <sys/wait.h>

#include <cstring>

#include <fmt/format.h>

namespace commrun {

std::string describeExit(int waitStatus) {
  if (WIFSIGNALED(waitStatus)) {
    const int signal = WTERMSIG(waitStatus);
    const char* name = sigdescr_np(signal);  // NULL for real-time signals
    return fmt::format("was killed by signal {} ({}){}", signal, name != nullptr ? name : "real-time signal",
                       WCOREDUMP(waitStatus) ? ", core dumped" : "");
  }
  return fmt::format("exited with status {}", WEXITSTATUS(waitStatus));
}

int exitCodeOf(int waitStatus) {
  return WIFSIGNALED(waitStatus) ? 128 + WTERMSIG(waitStatus) : WEXITSTATUS(waitStatus);
}

bool exitedCleanly(int waitStatus) { return WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0; }

}  // namespace commrun
