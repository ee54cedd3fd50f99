// What the launcher told this process: rank, size and where the rendezvous
// store is, read from the variables of commrun, torchrun, msrun, Slurm or
// Open MPI's mpirun.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace comm::bootstrap {

struct LaunchInfo {
  int rank = 0;
  int worldSize = 1;
  int localRank = -1;                  // -1 when the launcher does not say
  int localWorldSize = -1;             // -1 when the launcher does not say
  std::string masterAddr;              // host of the rendezvous store
  uint16_t masterPort = 0;             // port of the rendezvous store
  std::string launcher;                // "commrun", "torchrun", "msrun", "slurm", "mpirun", "config"
  bool storeHostedByLauncher = false;  // true under commrun; else rank 0 hosts it
  // The number under which commrun records this process's end
  // (commrun_keys::rankFailed): its rank, or for a rank commrun started
  // to replace one that failed (--replace), COMM_LAUNCH_SLOT.
  int launchSlot = 0;
  // Where the job's secret is kept when neither COMM_JOB_SECRET nor
  // COMM_JOB_SECRET_FILE is set and the launcher hands none (Slurm: a file
  // per job step in $HOME/.comm, which a cluster's nodes share); "" when the
  // launcher offers no such place.
  std::string secretFile;
};

// Reads a variable: a comm_config_t setting where one is given, else the environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Throws comm::Error (COMM_ERR_INVALID_ARGUMENT) naming the missing, malformed
// or contradictory variable.
LaunchInfo detectLaunch(const EnvLookup& lookup);

}  // namespace comm::bootstrap
