// Starting one rank: fork + exec with its output on pipes, in a process
// group of its own.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace commrun {

using comm::UniqueFd;

struct ChildSpec {
  std::string program;                   // a path, already searched in PATH
  std::vector<std::string> arguments;    // argv, argv[0] included
  std::vector<std::string> environment;  // NAME=value
  std::optional<cpu_set_t> cpus;         // binding, if any
  sigset_t signalMask;                   // the mask to restore before exec
  // Written to the child's stdin, which then ends; empty: stdin is
  // /dev/null. Small (a pipe's buffer holds it), as it is written at once.
  std::string input;
};

struct Child {
  pid_t pid;
  UniqueFd stdoutPipe;  // read ends, non-blocking
  UniqueFd stderrPipe;
};

// The child leads a new process group (pgid = pid), so that signalling
// -pid reaches whatever it forks too; its stdin is spec.input or else
// /dev/null, never the terminal, because a background group reading it
// would be stopped; it is killed if commrun dies. Throws std::runtime_error when the fork fails.
Child spawnChild(const ChildSpec& spec);

// The program to exec for `name`: itself when it contains a '/', else the
// first executable match in PATH. nullopt when there is none.
std::optional<std::string> findProgram(const std::string& name);

}  // namespace commrun
