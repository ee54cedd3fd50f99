// commrun: start N ranks of a program on this node, or on each of several
// hosts (like torchrun, msrun or mpirun), host or point them to the
// rendezvous store, prefix their output with their rank, and stop them all
// when one fails.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "across_hosts.h"
#include "bootstrap/job_secret.h"
#include "bootstrap/store.h"
#include "common/error.h"
#include "common/socket.h"
#include "core_binding.h"
#include "options.h"
#include "supervisor.h"

extern char** environ;

namespace commrun {
namespace {

// commrun's environment minus the variables it sets for each rank.
std::vector<std::string> inheritedEnvironment(const std::set<std::string>& replaced) {
  std::vector<std::string> kept;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view variable(*entry);
    if (!replaced.contains(std::string(variable.substr(0, variable.find('='))))) kept.emplace_back(variable);
  }
  return kept;
}

std::vector<RankLaunch> planRanks(const Options& options, const std::string& program, uint16_t storePort,
                                  const std::string& secret, const sigset_t& signalMask) {
  const std::vector<std::pair<std::string, std::string>> shared = {
      {"COMMRUN", "1"},
      // Only processes of this user (and root) can read another's
      // environment: the secret reaches the ranks and nobody else.
      {"COMM_JOB_SECRET", secret},
      {"COMM_WORLD_SIZE", std::to_string(options.worldSize())},
      {"COMM_LOCAL_WORLD_SIZE", std::to_string(options.ranksPerNode)},
      {"COMM_MASTER_ADDR", options.masterAddr},
      {"COMM_MASTER_PORT", std::to_string(storePort)},
  };
  // COMM_JOIN and COMM_LAUNCH_SLOT are for replacements (--replace) alone.
  std::set<std::string> replaced = {"COMM_RANK", "COMM_LOCAL_RANK", "COMM_JOB_SECRET_FILE", "COMM_JOIN",
                                    "COMM_LAUNCH_SLOT"};
  for (const auto& [name, value] : shared) replaced.insert(name);
  std::vector<std::string> base = inheritedEnvironment(replaced);
  for (const auto& [name, value] : shared) base.push_back(name + "=" + value);
  // libfabric's PSM provider (libinfinipath) would turn a rank's crash into
  // "exited with status 1" and a .btr file (transport/ofi/crash_signals.h);
  // set before the rank loads it, the user's own choice kept.
  if (std::getenv("IPATH_NO_BACKTRACE") == nullptr) base.push_back("IPATH_NO_BACKTRACE=1");

  const std::vector<cpu_set_t> cores = options.bindCore ? coreCpuSets() : std::vector<cpu_set_t>{};
  std::vector<RankLaunch> launches;
  for (int local = 0; local < options.ranksPerNode; ++local) {
    const int rank = options.nodeRank * options.ranksPerNode + local;
    RankLaunch launch{.rank = rank,
                      .spec = {.program = program,
                               .arguments = options.command,
                               .environment = base,
                               .cpus = std::nullopt,
                               .signalMask = signalMask,
                               .input = {}}};
    launch.spec.environment.push_back("COMM_RANK=" + std::to_string(rank));
    launch.spec.environment.push_back("COMM_LOCAL_RANK=" + std::to_string(local));
    if (!cores.empty()) launch.spec.cpus = cores[local % cores.size()];
    launches.push_back(std::move(launch));
  }
  return launches;
}

// Node 0's store must outlive the ranks of every node, not only its own: a
// rank elsewhere may still be reading its last answer. Each commrun counts
// itself out once its ranks are gone; the last one sets kAllNodesDone, and
// node 0 keeps the store up until then, until the job's --timeout (default
// kNodesDoneWait) runs out, or until SIGINT/SIGTERM; a job that failed here
// does not wait (its failure is in the store already).
constexpr const char* kNodesDone = "commrun/nodes_done";
constexpr const char* kAllNodesDone = "commrun/all_nodes_done";
constexpr std::chrono::seconds kLeaveTimeout{2};
constexpr std::chrono::seconds kNodesDoneWait{600};
constexpr std::chrono::milliseconds kNodesDonePoll{100};

bool interrupted(int signalFd) {
  signalfd_siginfo info;
  while (read(signalFd, &info, sizeof info) == sizeof info) {
    if (info.ssi_signo == SIGINT || info.ssi_signo == SIGTERM) return true;
  }
  return false;
}

void leaveStore(const Options& options, uint16_t storePort, const std::string& secret, int signalFd, bool succeeded) {
  if (options.nodes <= 1) return;
  try {
    const comm::Deadline deadline(kLeaveTimeout);
    comm::bootstrap::StoreClient client(options.masterAddr, storePort, secret, deadline);
    if (client.add(kNodesDone, 1, deadline) == options.nodes) client.set(kAllNodesDone, "1", deadline);
    // After a failure the job is over, unless --keep-going keeps the
    // survivors on the other nodes running: they still need the store.
    if (!options.hostsStore() || !(succeeded || options.keepGoing)) return;
    const std::chrono::duration<double> wait =
        options.timeoutSeconds ? std::chrono::duration<double>(*options.timeoutSeconds) : kNodesDoneWait;
    const comm::Deadline end(std::chrono::duration_cast<std::chrono::milliseconds>(wait));
    while (!client.check(kAllNodesDone, comm::Deadline(kLeaveTimeout)) && !end.expired() && !interrupted(signalFd)) {
      usleep(std::chrono::microseconds(kNodesDonePoll).count());
    }
  } catch (const comm::Error& error) {
    // After a failure node 0 does not wait for the others' sign-off, so its
    // store may be gone; the job's last line has already said why it ended.
    if (succeeded) {
      fmt::print(stderr, "commrun: node {} could not sign off at the store: {}\n", options.nodeRank, error.what());
    }
  }
}

// Where node 0's store listens: the master address, as the other nodes
// reach node 0 by it. But a name that resolves to loopback here (Debian maps
// a host's own name to 127.0.1.1) would put the store out of their reach
// while they, resolving it to this host's network address, wait for it: the
// store then listens on every interface. A numeric loopback address is kept:
// whoever gives one means this machine only.
std::string storeListenHost(const Options& options) {
  if (options.nodes > 1 && comm::loopbackNameAddress(options.masterAddr)) return "";
  return options.masterAddr;
}

// The mirror case on another node: its ranks would knock on their own
// loopback until COMM_TIMEOUT. Said at once, since it is almost certainly a
// mistake (unless node 0 runs on this same machine).
void noteLoopbackMaster(const Options& options) {
  if (options.hostsStore()) return;
  if (std::optional<std::string> address = comm::loopbackNameAddress(options.masterAddr)) {
    fmt::print(stderr,
               "commrun: node {}: --master-addr {} resolves to {} here, a loopback address: unless node 0 runs on "
               "this machine, this node's ranks cannot reach its store; give node 0's address or a name that "
               "resolves to it from every node\n",
               options.nodeRank, options.masterAddr, *address);
  }
}

// The secret this job's processes prove to each other: the one the
// environment gives (COMM_JOB_SECRET, or COMM_JOB_SECRET_FILE, which node 0
// creates when it is missing and the other nodes wait for), else on a single
// node a new one. Nodes cannot agree on a new one by themselves.
std::optional<std::string> jobSecret(const Options& options) {
  const comm::Deadline deadline(options.timeoutSeconds ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                                             std::chrono::duration<double>(*options.timeoutSeconds))
                                                       : std::chrono::milliseconds(kNodesDoneWait));
  auto environment = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  if (auto secret = comm::bootstrap::findJobSecret(environment, options.hostsStore(), deadline)) return secret;
  if (options.nodes == 1) return comm::bootstrap::makeJobSecret();
  fmt::print(stderr,
             "commrun: the nodes of a job need one secret: set COMM_JOB_SECRET to the same value on every node, or "
             "COMM_JOB_SECRET_FILE to a file every node can read (node 0 creates it); see docs/security.md\n");
  return std::nullopt;
}

int run(const Options& options) {
  // Blocked before the store's thread starts, so that these signals reach
  // only the signalfd; the ranks get the original mask back.
  sigset_t handled;
  sigset_t original;
  sigemptyset(&handled);
  for (int signal : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&handled, signal);
  pthread_sigmask(SIG_BLOCK, &handled, &original);
  // A reader of commrun's output that goes away must not kill the job.
  signal(SIGPIPE, SIG_IGN);
  comm::UniqueFd signals(signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals.valid()) throw std::system_error(errno, std::generic_category(), "signalfd");
  // Each host's commrun looks for the program there.
  if (options.acrossHosts()) return runAcrossHosts(options, signals.get(), original);
  const std::optional<std::string> program = findProgram(options.command.front());
  if (!program) {
    fmt::print(stderr, "commrun: {}: command not found or not executable\n", options.command.front());
    return 127;
  }
  const std::optional<std::string> secret = jobSecret(options);
  if (!secret) return 2;

  // The store lives until every rank of this node is gone.
  noteLoopbackMaster(options);
  std::unique_ptr<comm::bootstrap::StoreServer> store;
  uint16_t storePort = options.masterPort;
  if (options.hostsStore()) {
    store = std::make_unique<comm::bootstrap::StoreServer>(storeListenHost(options), options.masterPort, *secret);
    storePort = store->port();
  }
  if (options.logDir) std::filesystem::create_directories(*options.logDir);

  Supervisor supervisor(
      SupervisorConfig{.timeout = options.timeoutSeconds
                                      ? std::optional<std::chrono::duration<double>>(*options.timeoutSeconds)
                                      : std::nullopt,
                       .grace = std::chrono::duration<double>(options.graceSeconds),
                       .keepGoing = options.keepGoing,
                       .logDir = options.logDir,
                       .storeHost = options.masterAddr,
                       .storePort = storePort,
                       .secret = *secret,
                       .multiNode = options.nodes > 1,
                       .agentHosts = {},
                       .replaceLimit = options.replace,
                       .worldSize = options.worldSize()},
      signals.get());
  const int status = supervisor.run(planRanks(options, *program, storePort, *secret, original));
  leaveStore(options, storePort, *secret, signals.get(), status == 0);
  return status;
}

}  // namespace
}  // namespace commrun

int main(int argc, char** argv) {
  try {
    return commrun::run(commrun::parseOptions(argc, argv));
  } catch (const commrun::UsageExit& exit) {
    return exit.code;
  } catch (const std::exception& error) {
    fmt::print(stderr, "commrun: {}\n", error.what());
    return 1;
  }
}
