// The life of one node's ranks: start them, relay their output, and when one
// fails, times out or commrun is interrupted, stop the rest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "line_relay.h"
#include "spawn.h"

namespace commrun {

struct RankLaunch {
  int rank;  // a host's node index when the child is a launcher agent
  ChildSpec spec;
};

struct SupervisorConfig {
  std::optional<std::chrono::duration<double>> timeout;
  std::chrono::duration<double> grace;
  // --keep-going: a rank's failure is told at once and recorded, but the
  // others keep running; the last line names every failure.
  bool keepGoing = false;
  std::optional<std::filesystem::path> logDir;
  std::string storeHost;  // where the first failure is recorded
  uint16_t storePort;
  std::string secret;  // the job's, proven to the store
  // One commrun of several (--nnodes): the job's first failure may have
  // happened on another node, and the last line names it.
  bool multiNode = false;
  // The children are launcher agents, one per host, each running that
  // host's commrun (--hosts): their lines already carry their ranks, and a
  // host's failure is told in its commrun's own last line. Nothing is
  // recorded in the store, which is on the first host.
  std::vector<std::string> agentHosts;
  // --replace (implies keepGoing): a failed process is replaced, at most
  // this many times, by one that joins the job in its place (same spec and
  // rank, plus COMM_JOIN=1 and COMM_LAUNCH_SLOT); 0: never.
  int replaceLimit = 0;
  // The job's; a replacement's launch slot is worldSize + the job's count
  // of replacements before it (commrun_keys::kReplacements).
  int worldSize = 0;
};

class Supervisor {
 public:
  // `signalFd` is a non-blocking signalfd for SIGCHLD, SIGINT and SIGTERM.
  Supervisor(SupervisorConfig config, int signalFd);

  // Starts every rank and returns commrun's exit code once all have exited
  // and their output is relayed. Waits only in poll(): idle costs nothing.
  int run(std::vector<RankLaunch> launches);

 private:
  using Clock = std::chrono::steady_clock;
  using Timer = std::optional<Clock::time_point>;

  struct Stream {
    UniqueFd fd;
    LineRelay relay;
  };
  struct Rank {
    int rank;
    // What names it in the output prefix, log file and store: its rank,
    // or for a replacement (--replace) its COMM_LAUNCH_SLOT.
    int slot;
    pid_t pid;  // -1 once reaped
    UniqueFd log;
    std::vector<Stream> streams;
    ChildSpec spec;  // what a replacement starts again
  };
  // A failed process whose replacement starts once the event loop is
  // between events: starting one adds to ranks_, which event handling
  // holds references into.
  struct Replacement {
    RankLaunch launch;
    std::string failure;  // the failed process's description
  };
  // Why commrun ends: the first of a rank failure, the timeout or a signal.
  struct AgentExit {
    ptrdiff_t index;  // in ranks_
    pid_t pid;
    int waitStatus;
  };
  struct Outcome {
    int exitCode;
    std::string message;
    std::optional<AgentExit> agent = std::nullopt;  // a launcher agent failed: told at the end
  };

  void start(std::vector<RankLaunch>& launches);
  // Starts `launch` as launch slot `slot`; throws when it cannot.
  void launch(RankLaunch launch, int slot);
  void startReplacements();
  void replace(Replacement replacement);
  int claimReplacementSlot();
  void handleSignals();
  void reapChildren();
  void rankExited(Rank& rank, int waitStatus);
  void interrupted(int signal);
  void fireTimers();
  void pump(Stream& stream);
  void terminateRanks();
  void signalRanks(int signal);
  bool settle(Outcome outcome);
  // After a rank's (or an agent's) failure: the others get the grace period,
  // or with --keep-going go on.
  void afterFailure(bool first, const std::string& description, std::string_view unreplaced = {});
  void recordFailure(int rank, const std::string& description, bool first);
  // Tells the ranks that a failure is the failed rank's alone (--keep-going).
  void recordKeepGoing();
  std::optional<std::string> firstFailureInJob();
  std::string describeAgentExit(const Rank& agent, pid_t pid, int waitStatus) const;
  bool anyRunning() const;
  int timeoutMs() const;

  SupervisorConfig config_;
  int signalFd_;
  std::vector<Rank> ranks_;
  std::vector<pid_t> startedPids_;  // every child's, reaped or not
  std::optional<Outcome> outcome_;
  std::vector<std::string> laterFailures_;  // --keep-going: those after the first, in order
  int interruptions_ = 0;
  // Interrupted, timed out or failed to start: failures are no longer replaced.
  bool ending_ = false;
  std::vector<Replacement> replacements_;  // waiting to start
  int replacementsStarted_ = 0;
  bool unreplacedFailure_ = false;  // --replace: some failed process was not replaced
  Timer timeoutAt_;
  Timer graceEndsAt_;
  Timer killAt_;
  Timer drainUntil_;
  std::vector<char> buffer_;
  std::string hostName_;
};

}  // namespace commrun
