// detectLaunch: which launcher started this process, read from its variables.
//
// Precedence, innermost launcher first: COMM_* (commrun's, or the user's
// configuration), torchrun, msrun, Open MPI's mpirun, Slurm. Open MPI comes
// before Slurm because `mpirun` inside an sbatch allocation is the usual way
// to run Open MPI under Slurm, and then every process inherits the batch
// step's SLURM_PROCID=0; mpirun's own variables are the per-process truth.
// Other nestings (`srun torchrun ...`) are resolved by the same rule.
//
// The store's address and port: COMM_MASTER_* first, else the launcher's
// (torchrun's, msrun's); Slurm names none, so its step's first host and a
// port derived from the job id stand in (see kSlurmPortBase).
#include "bootstrap/launch_environment.h"

#include <array>
#include <charconv>
#include <limits>

#include "bootstrap/slurm_nodelist.h"
#include "common/error.h"

namespace comm::bootstrap {
namespace {

// The variables through which one launcher describes a process; an empty
// name means the launcher has no such variable.
struct LauncherVars {
  std::string_view launcher;
  std::string_view rank;
  std::string_view size;
  std::string_view localRank;
  std::string_view localSize;
  std::string_view masterAddr;
  std::string_view masterPort;
  // torchrun and msrun run their own servers on their master port (torch's
  // TCPStore, MindSpore's scheduler), so our store listens on that port + 1.
  bool portTaken = false;
  // Slurm's SLURM_NTASKS is also set in a plain allocation shell, so only
  // SLURM_PROCID says that srun started this process.
  bool sizeAloneIsLaunch = true;
  // SLURM_NTASKS_PER_NODE may be a list ("2(x3),1"); only a plain integer is a size.
  bool localSizeMayBeList = false;
  // Slurm names no master, but its first task runs on the first host of the
  // step's node list, and the job id tells one job's store port from another's.
  bool slurmNodeList = false;
};

constexpr LauncherVars kCommVars{.launcher = "config",
                                 .rank = "COMM_RANK",
                                 .size = "COMM_WORLD_SIZE",
                                 .localRank = "COMM_LOCAL_RANK",
                                 .localSize = "COMM_LOCAL_WORLD_SIZE",
                                 .masterAddr = "COMM_MASTER_ADDR",
                                 .masterPort = "COMM_MASTER_PORT"};

constexpr LauncherVars kLaunchers[] = {
    {.launcher = "torchrun",
     .rank = "RANK",
     .size = "WORLD_SIZE",
     .localRank = "LOCAL_RANK",
     .localSize = "LOCAL_WORLD_SIZE",
     .masterAddr = "MASTER_ADDR",
     .masterPort = "MASTER_PORT",
     .portTaken = true},
    {.launcher = "msrun",
     .rank = "RANK_ID",
     .size = "RANK_SIZE",
     .masterAddr = "MS_SCHED_HOST",
     .masterPort = "MS_SCHED_PORT",
     .portTaken = true},
    {.launcher = "mpirun",
     .rank = "OMPI_COMM_WORLD_RANK",
     .size = "OMPI_COMM_WORLD_SIZE",
     .localRank = "OMPI_COMM_WORLD_LOCAL_RANK",
     .localSize = "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {.launcher = "slurm",
     .rank = "SLURM_PROCID",
     .size = "SLURM_NTASKS",
     .localRank = "SLURM_LOCALID",
     .localSize = "SLURM_NTASKS_PER_NODE",
     .sizeAloneIsLaunch = false,
     .localSizeMayBeList = true,
     .slurmNodeList = true},
};

constexpr int kMaxPort = std::numeric_limits<uint16_t>::max();

// Under Slurm without COMM_MASTER_PORT the store's port is kSlurmPortBase +
// SLURM_JOB_ID % kSlurmPorts: below Linux's ephemeral ports (32768 on), so
// that no connection's local port holds it, and different for jobs whose
// ids differ by less than kSlurmPorts, which share nodes most often.
constexpr int kSlurmPortBase = 15000;
constexpr int kSlurmPorts = 15000;
constexpr std::string_view kSlurmNodeLists[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"};

class Env {
 public:
  explicit Env(const EnvLookup& lookup) : lookup_(lookup) {}

  std::optional<std::string> text(std::string_view name) const {
    if (name.empty()) return std::nullopt;
    return lookup_(name);
  }
  bool has(std::string_view name) const { return text(name).has_value(); }

  // The variable as an integer in [low, high]; nullopt when unset.
  std::optional<int> integer(std::string_view name, int low, int high) const {
    std::optional<std::string> value = text(name);
    if (!value) return std::nullopt;
    std::optional<int64_t> number = parse(*value);
    if (!number) fail(COMM_ERR_INVALID_ARGUMENT, "{}='{}' is not an integer", name, *value);
    if (*number < low || *number > high) {
      fail(COMM_ERR_INVALID_ARGUMENT, "{}={} is out of range ({}..{})", name, *number, low, high);
    }
    return static_cast<int>(*number);
  }

  static std::optional<int64_t> parse(std::string_view text) {
    int64_t number = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return number;
  }

 private:
  const EnvLookup& lookup_;
};

// Rank and sizes as one launcher's variables give them.
struct Reading {
  const LauncherVars* vars;
  int rank;
  int size;
  int localRank = -1;
  int localSize = -1;
};

bool launched(const Env& env, const LauncherVars& vars) {
  return env.has(vars.rank) || (vars.sizeAloneIsLaunch && env.has(vars.size));
}

// Each variable of a reading with its value, in the order rank, size, local rank, local size.
struct Field {
  std::string_view name;
  int value;
};
std::array<Field, 4> fields(const Reading& reading) {
  const LauncherVars& vars = *reading.vars;
  return {{{vars.rank, reading.rank},
           {vars.size, reading.size},
           {vars.localRank, reading.localRank},
           {vars.localSize, reading.localSize}}};
}

Reading read(const Env& env, const LauncherVars& vars) {
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  auto require = [&](std::string_view name, std::string_view because) {
    if (!env.has(name)) fail(COMM_ERR_INVALID_ARGUMENT, "{} is set but {} is missing", because, name);
  };
  const std::string_view given = env.has(vars.rank) ? vars.rank : vars.size;
  require(vars.rank, given);
  require(vars.size, given);
  Reading reading{
      .vars = &vars, .rank = *env.integer(vars.rank, 0, kMaxInt), .size = *env.integer(vars.size, 1, kMaxInt)};
  if (reading.rank >= reading.size) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{}={} is out of range: {} is {} (ranks 0..{})", vars.rank, reading.rank, vars.size,
         reading.size, reading.size - 1);
  }
  const bool listedLocalSize =
      vars.localSizeMayBeList && env.has(vars.localSize) && !Env::parse(*env.text(vars.localSize));
  if (!listedLocalSize) reading.localSize = env.integer(vars.localSize, 1, reading.size).value_or(-1);
  reading.localRank = env.integer(vars.localRank, 0, kMaxInt).value_or(-1);
  if (reading.localSize > 0 && reading.localRank >= reading.localSize) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{}={} is out of range: {} is {}", vars.localRank, reading.localRank,
         vars.localSize, reading.localSize);
  }
  return reading;
}

// A configuration that names a rank must agree with the launcher it sits in.
// commrun's own variables are exempt: commrun may run inside an allocation or
// job step whose variables describe commrun, not its ranks.
void checkAgreement(const Reading& config, const Reading& launcher) {
  const std::array<Field, 4> mine = fields(config);
  const std::array<Field, 4> theirs = fields(launcher);
  for (size_t i = 0; i < mine.size(); ++i) {
    // -1 marks a value the launcher does not give.
    if (mine[i].value >= 0 && theirs[i].value >= 0 && mine[i].value != theirs[i].value) {
      fail(COMM_ERR_INVALID_ARGUMENT, "{}={} contradicts {}={} set by {}", mine[i].name, mine[i].value, theirs[i].name,
           theirs[i].value, launcher.vars->launcher);
    }
  }
}

// Where the store is: COMM_MASTER_* first, else the launcher's own variables.
void locateStore(const Env& env, const LauncherVars* launcher, LaunchInfo& info) {
  std::string_view addrVar = kCommVars.masterAddr;
  if (!env.has(addrVar) && launcher != nullptr && env.has(launcher->masterAddr)) addrVar = launcher->masterAddr;
  info.masterAddr = env.text(addrVar).value_or("");

  std::string_view portVar = kCommVars.masterPort;
  bool portTaken = false;
  if (!env.has(portVar) && launcher != nullptr && env.has(launcher->masterPort)) {
    portVar = launcher->masterPort;
    portTaken = launcher->portTaken;
  }
  if (info.masterAddr.empty() && launcher != nullptr && launcher->slurmNodeList) {
    for (std::string_view list : kSlurmNodeLists) {
      if (std::optional<std::string> text = env.text(list)) {
        std::optional<std::string> first = firstSlurmHost(*text);
        if (!first)
          fail(COMM_ERR_INVALID_ARGUMENT, "{}='{}' is not a Slurm host list; set COMM_MASTER_ADDR", list, *text);
        info.masterAddr = *first;
        addrVar = list;
        break;
      }
    }
  }
  if (launcher != nullptr && launcher->slurmNodeList && env.has("SLURM_JOB_ID")) {
    const int job = *env.integer("SLURM_JOB_ID", 0, std::numeric_limits<int>::max());
    if (!env.has(portVar)) info.masterPort = static_cast<uint16_t>(kSlurmPortBase + job % kSlurmPorts);
    if (std::optional<std::string> home = env.text("HOME"); home && !home->empty()) {
      info.secretFile = fmt::format("{}/.comm/slurm-{}.{}.secret", *home, job, env.text("SLURM_STEP_ID").value_or("0"));
    }
  }
  if (std::optional<int> port = env.integer(portVar, 1, kMaxPort)) {
    if (portTaken && *port == kMaxPort) {
      fail(COMM_ERR_INVALID_ARGUMENT, "{}={} leaves no port for the store, which uses {} + 1; set COMM_MASTER_PORT",
           portVar, *port, portVar);
    }
    info.masterPort = static_cast<uint16_t>(*port + (portTaken ? 1 : 0));
  }

  if (info.worldSize == 1) return;
  if (info.masterAddr.empty() && info.launcher == "mpirun") {
    // Open MPI tells a process its own rank and node, not where rank 0 runs.
    fail(COMM_ERR_INVALID_ARGUMENT,
         "rank {} of {} (launched by mpirun) has no rendezvous address: Open MPI does not say where rank 0 runs; set "
         "COMM_MASTER_ADDR to rank 0's host and COMM_MASTER_PORT to a free port there, e.g. mpirun -x "
         "COMM_MASTER_ADDR=$(hostname) -x COMM_MASTER_PORT=29500 ... when rank 0 runs where mpirun does",
         info.rank, info.worldSize);
  }
  if (info.masterAddr.empty()) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "rank {} of {} (launched by {}) has no rendezvous address: set COMM_MASTER_ADDR to the host of rank 0 "
         "(and COMM_MASTER_PORT)",
         info.rank, info.worldSize, info.launcher);
  }
  if (info.masterPort == 0) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "rank {} of {} (launched by {}) has no rendezvous port: set COMM_MASTER_PORT (master address {} comes "
         "from {})",
         info.rank, info.worldSize, info.launcher, info.masterAddr, addrVar);
  }
}

}  // namespace

LaunchInfo detectLaunch(const EnvLookup& lookup) {
  const Env env(lookup);
  const bool underCommrun = env.text("COMMRUN") == "1";
  const bool configured =
      underCommrun || launched(env, kCommVars) || env.has(kCommVars.localRank) || env.has(kCommVars.localSize);

  const LauncherVars* outer = nullptr;
  for (const LauncherVars& vars : kLaunchers) {
    if (launched(env, vars)) {
      outer = &vars;
      break;
    }
  }

  LaunchInfo info;
  info.launcher = "none";
  std::optional<Reading> chosen;
  if (configured) {
    if (!env.has(kCommVars.rank) && !env.has(kCommVars.size)) {
      fail(COMM_ERR_INVALID_ARGUMENT, "{} is set but COMM_RANK and COMM_WORLD_SIZE are missing",
           underCommrun ? "COMMRUN" : (env.has(kCommVars.localRank) ? kCommVars.localRank : kCommVars.localSize));
    }
    chosen = read(env, kCommVars);
    if (outer != nullptr && !underCommrun) {
      const Reading launcher = read(env, *outer);
      checkAgreement(*chosen, launcher);
      // What the configuration leaves out, the launcher still knows.
      if (chosen->localRank < 0) chosen->localRank = launcher.localRank;
      if (chosen->localSize < 0) chosen->localSize = launcher.localSize;
    }
    info.launcher = underCommrun ? "commrun" : "config";
  } else if (outer != nullptr) {
    chosen = read(env, *outer);
    info.launcher = outer->launcher;
  }
  if (chosen) {
    info.rank = chosen->rank;
    info.worldSize = chosen->size;
    info.localRank = chosen->localRank;
    info.localWorldSize = chosen->localSize;
  }
  info.storeHostedByLauncher = underCommrun;
  info.launchSlot = info.rank;
  if (underCommrun) {
    info.launchSlot = env.integer("COMM_LAUNCH_SLOT", 0, std::numeric_limits<int>::max()).value_or(info.rank);
  }
  locateStore(env, outer, info);
  return info;
}

}  // namespace comm::bootstrap
