// commrun: start N ranks of a program on this node (like torchrun, msrun or
// mpirun), host or point them to the rendezvous store, prefix their output
// with their rank, and stop them all when one fails.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "bootstrap/store.h"
#include "core/error.h"
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
                                  const sigset_t& signalMask) {
  const std::vector<std::pair<std::string, std::string>> shared = {
      {"COMMRUN", "1"},
      {"COMM_WORLD_SIZE", std::to_string(options.worldSize())},
      {"COMM_LOCAL_WORLD_SIZE", std::to_string(options.ranksPerNode)},
      {"COMM_MASTER_ADDR", options.masterAddr},
      {"COMM_MASTER_PORT", std::to_string(storePort)},
  };
  std::set<std::string> replaced = {"COMM_RANK", "COMM_LOCAL_RANK"};
  for (const auto& [name, value] : shared) replaced.insert(name);
  std::vector<std::string> base = inheritedEnvironment(replaced);
  for (const auto& [name, value] : shared) base.push_back(name + "=" + value);

  const std::vector<cpu_set_t> cores = options.bindCore ? coreCpuSets() : std::vector<cpu_set_t>{};
  std::vector<RankLaunch> launches;
  for (int local = 0; local < options.ranksPerNode; ++local) {
    const int rank = options.nodeRank * options.ranksPerNode + local;
    RankLaunch launch{.rank = rank,
                      .spec = {.program = program,
                               .arguments = options.command,
                               .environment = base,
                               .cpus = std::nullopt,
                               .signalMask = signalMask}};
    launch.spec.environment.push_back("COMM_RANK=" + std::to_string(rank));
    launch.spec.environment.push_back("COMM_LOCAL_RANK=" + std::to_string(local));
    if (!cores.empty()) launch.spec.cpus = cores[local % cores.size()];
    launches.push_back(std::move(launch));
  }
  return launches;
}

int run(const Options& options) {
  const std::optional<std::string> program = findProgram(options.command.front());
  if (!program) {
    fmt::print(stderr, "commrun: {}: command not found or not executable\n", options.command.front());
    return 127;
  }

  // Blocked before the store's thread starts, so that these signals reach
  // only the signalfd; the ranks get the original mask back.
  sigset_t handled;
  sigset_t original;
  sigemptyset(&handled);
  for (int signal : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&handled, signal);
  pthread_sigmask(SIG_BLOCK, &handled, &original);
  // A reader of commrun's output that goes away must not kill the job.
  signal(SIGPIPE, SIG_IGN);
  comm::bootstrap::UniqueFd signals(signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals.valid()) throw std::system_error(errno, std::generic_category(), "signalfd");

  // The store lives until every rank of this node is gone. It listens on
  // the master address as given, which must therefore be one that the
  // other nodes reach this node by.
  std::unique_ptr<comm::bootstrap::StoreServer> store;
  uint16_t storePort = options.masterPort;
  if (options.hostsStore()) {
    store = std::make_unique<comm::bootstrap::StoreServer>(options.masterAddr, options.masterPort);
    storePort = store->port();
  }
  if (options.logDir) std::filesystem::create_directories(*options.logDir);

  Supervisor supervisor(
      SupervisorConfig{.timeout = options.timeoutSeconds
                                      ? std::optional<std::chrono::duration<double>>(*options.timeoutSeconds)
                                      : std::nullopt,
                       .grace = std::chrono::duration<double>(options.graceSeconds),
                       .logDir = options.logDir,
                       .storeHost = options.masterAddr,
                       .storePort = storePort},
      signals.get());
  return supervisor.run(planRanks(options, *program, storePort, original));
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
