#include "across_hosts.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "bootstrap/job_secret.h"
#include "spawn.h"
#include "supervisor.h"

extern char** environ;

namespace commrun {
namespace {

// After its --timeout a host's commrun stops its ranks and says so; this
// one waits that much longer before it gives up on the host.
constexpr double kHostTimeoutSlack = 30;

// One word for a POSIX shell: the agent hands the command line to one, as ssh does.
std::string shellWord(std::string_view word) {
  std::string text = "'";
  for (char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

constexpr std::string_view kSecretVariable = "COMM_JOB_SECRET";

// comm's and libfabric's settings travel with the job: ssh passes on no
// environment, and every rank must see the same ones. The secret does not
// travel on a command line, which any local user can read in /proc: it
// goes on the agent's stdin.
bool forwarded(std::string_view variable) {
  if (variable.starts_with(kSecretVariable) && variable.substr(kSecretVariable.size()).starts_with("=")) return false;
  return variable.starts_with("COMM_") || variable.starts_with("FI_");
}

// The secret every host's commrun is handed: the user's COMM_JOB_SECRET, or
// a new one; none when COMM_JOB_SECRET_FILE alone names where each host
// finds it.
std::optional<std::string> secretToHand() {
  if (const char* secret = std::getenv(std::string(kSecretVariable).c_str())) return secret;
  if (std::getenv("COMM_JOB_SECRET_FILE") != nullptr) return std::nullopt;
  return comm::bootstrap::makeJobSecret();
}

std::string remoteCommandLine(const Options& options, int node, bool secretOnStdin) {
  std::vector<std::string> words = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                    "-n",
                                    std::to_string(options.ranksPerNode),
                                    "--nnodes",
                                    std::to_string(options.hosts.size()),
                                    "--node-rank",
                                    std::to_string(node),
                                    "--master-addr",
                                    options.masterAddr,
                                    "--master-port",
                                    std::to_string(options.masterPort),
                                    "--grace",
                                    fmt::format("{}", options.graceSeconds)};
  if (options.timeoutSeconds) {
    words.insert(words.end(), {"--timeout", fmt::format("{}", *options.timeoutSeconds)});
  }
  if (options.bindCore) words.emplace_back("--bind-core");
  if (options.keepGoing) words.emplace_back("--keep-going");
  // Each host's commrun replaces its own ranks: it has their programs and environments.
  if (options.replace > 0) words.insert(words.end(), {"--replace", std::to_string(options.replace)});
  if (options.logDir) words.insert(words.end(), {"--log-dir", std::filesystem::absolute(*options.logDir).string()});
  words.emplace_back("--");
  words.insert(words.end(), options.command.begin(), options.command.end());

  std::string line = "cd " + shellWord(std::filesystem::current_path().string());
  if (secretOnStdin) line += fmt::format(" && IFS= read -r {0} && export {0}", kSecretVariable);
  line += " && exec env";
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (forwarded(*entry)) line += " " + shellWord(*entry);
  }
  for (const std::string& word : words) line += " " + shellWord(word);
  return line;
}

std::vector<std::string> agentWords(const std::string& agent) {
  std::istringstream in(agent);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  if (words.empty()) throw std::runtime_error("--launcher-agent is empty");
  return words;
}

}  // namespace

int runAcrossHosts(const Options& options, int signalFd, const sigset_t& signalMask) {
  std::vector<std::string> agent = agentWords(options.launcherAgent);
  const std::optional<std::string> program = findProgram(agent.front());
  if (!program) throw std::runtime_error(fmt::format("launcher agent {}: command not found", agent.front()));
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);

  const std::optional<std::string> secret = secretToHand();

  std::vector<RankLaunch> launches;
  for (size_t node = 0; node < options.hosts.size(); ++node) {
    RankLaunch launch{.rank = static_cast<int>(node),
                      .spec = {.program = *program,
                               .arguments = agent,
                               .environment = environment,
                               .cpus = std::nullopt,
                               .signalMask = signalMask,
                               .input = secret ? *secret + "\n" : ""}};
    launch.spec.arguments.push_back(options.hosts[node]);
    launch.spec.arguments.push_back(remoteCommandLine(options, static_cast<int>(node), secret.has_value()));
    launches.push_back(std::move(launch));
  }

  std::optional<std::chrono::duration<double>> timeout;
  if (options.timeoutSeconds) timeout = std::chrono::duration<double>(*options.timeoutSeconds + kHostTimeoutSlack);
  Supervisor supervisor(SupervisorConfig{.timeout = timeout,
                                         .grace = std::chrono::duration<double>(options.graceSeconds),
                                         .keepGoing = options.keepGoing,
                                         .logDir = std::nullopt,
                                         .storeHost = {},
                                         .storePort = 0,
                                         .secret = {},
                                         .multiNode = false,
                                         .agentHosts = options.hosts,
                                         .replaceLimit = 0,
                                         .worldSize = 0},
                        signalFd);
  return supervisor.run(std::move(launches));
}

}  // namespace commrun
