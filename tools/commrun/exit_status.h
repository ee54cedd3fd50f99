// What a rank's wait status means, in words and as commrun's exit code.
#pragma once

#include <string>

namespace commrun {

// "exited with status 3" or "was killed by signal 9 (Killed)".
std::string describeExit(int waitStatus);

// The status a shell would report: the exit code, or 128 + the signal.
int exitCodeOf(int waitStatus);

bool exitedCleanly(int waitStatus);

}  // namespace commrun
