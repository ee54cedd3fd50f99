// commrun --hosts: one commrun per host, each started through the launcher
// agent (ssh by default) with --nnodes/--node-rank, their output relayed,
// and the job ended everywhere when one host fails.
#pragma once

#include <signal.h>

#include "options.h"

namespace commrun {

// Returns commrun's exit code: 0 when every host's commrun succeeded, else
// the first failed host's, whose last line (naming the job's first failed
// rank) becomes this commrun's last line. `signalFd` and `signalMask` as
// for the Supervisor.
int runAcrossHosts(const Options& options, int signalFd, const sigset_t& signalMask);

}  // namespace commrun
