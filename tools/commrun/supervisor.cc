#include "supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "bootstrap/commrun_keys.h"
#include "bootstrap/store.h"
#include "common/error.h"
#include "common/host_name.h"
#include "common/shm_segment.h"
#include "exit_status.h"

namespace commrun {

namespace keys = comm::bootstrap::commrun_keys;
namespace {

// From SIGTERM to SIGKILL, for ranks that ignore or linger on SIGTERM.
constexpr std::chrono::seconds kKillDelay{2};
// How long output may still arrive after every rank exited: only processes
// that escaped their rank's group can hold a pipe open that long.
constexpr std::chrono::seconds kDrainLimit{1};
constexpr size_t kReadChunk = 64 * 1024;
constexpr std::chrono::seconds kStoreTimeout{2};

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, int signalFd)
    : config_(std::move(config)), signalFd_(signalFd), buffer_(kReadChunk), hostName_(comm::hostName()) {}

int Supervisor::run(std::vector<RankLaunch> launches) {
  if (config_.timeout) {
    timeoutAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(*config_.timeout);
  }
  // Under --hosts each host's commrun records it; this one has no store.
  if (config_.keepGoing && config_.agentHosts.empty()) recordKeepGoing();
  start(launches);

  std::vector<pollfd> fds;
  std::vector<Stream*> polled;
  for (;;) {
    startReplacements();
    fds.assign(1, pollfd{signalFd_, POLLIN, 0});
    polled.clear();
    for (Rank& rank : ranks_) {
      for (Stream& stream : rank.streams) {
        if (!stream.fd.valid()) continue;
        fds.push_back({stream.fd.get(), POLLIN, 0});
        polled.push_back(&stream);
      }
    }
    if (!anyRunning()) {
      if (polled.empty()) break;
      if (!drainUntil_) drainUntil_ = Clock::now() + kDrainLimit;
    }
    if (poll(fds.data(), fds.size(), timeoutMs()) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "commrun: poll");
    }
    if (fds[0].revents != 0) handleSignals();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) pump(*polled[i - 1]);
    }
    fireTimers();
  }
  // A rank killed between creating a shared-memory segment and unlinking
  // it leaves the name; its job is over now, so is the name.
  comm::sweepAbandonedSegments(startedPids_);

  if (!outcome_) return 0;
  std::string message = outcome_->message;
  if (const std::optional<AgentExit>& agent = outcome_->agent) {
    message = describeAgentExit(ranks_[agent->index], agent->pid, agent->waitStatus);
  }
  if (config_.multiNode) {
    std::optional<std::string> first = firstFailureInJob();
    if (first && *first != message) message = fmt::format("{}, the job's first failure; here {}", *first, message);
  }
  for (const std::string& later : laterFailures_) message += fmt::format("; then {}", later);
  // Replaced failures are healed: the job succeeded if what took their
  // places (and every other rank) ended cleanly.
  const bool healed = config_.replaceLimit > 0 && !ending_ && !unreplacedFailure_;
  if (healed) {
    message += fmt::format("; all replaced (--replace {}), and every launch slot's last process exited cleanly",
                           config_.replaceLimit);
  } else if (replacementsStarted_ > 0) {
    message += fmt::format("; {} replaced (--replace {})", replacementsStarted_, config_.replaceLimit);
  }
  writeAll(STDERR_FILENO, fmt::format("commrun: {}\n", message));
  return healed ? 0 : outcome_->exitCode;
}

void Supervisor::start(std::vector<RankLaunch>& launches) {
  for (RankLaunch& each : launches) {
    const int rank = each.rank;
    try {
      launch(std::move(each), rank);
    } catch (const std::exception& error) {
      ending_ = true;
      settle({1, fmt::format("could not start rank {}: {}", rank, error.what())});
      terminateRanks();
      return;
    }
  }
}

void Supervisor::launch(RankLaunch launch, int slot) {
  Rank rank{.rank = launch.rank, .slot = slot, .pid = -1, .log = {}, .streams = {}, .spec = {}};
  const std::string prefix = config_.agentHosts.empty() ? fmt::format("[{}] ", slot) : std::string();
  if (config_.logDir) {
    const auto path = *config_.logDir / fmt::format("rank.{}.log", slot);
    rank.log.reset(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!rank.log.valid()) throw std::system_error(errno, std::generic_category(), "cannot create " + path.string());
  }
  Child child = spawnChild(launch.spec);
  rank.pid = child.pid;
  startedPids_.push_back(child.pid);
  rank.streams.push_back({std::move(child.stdoutPipe), LineRelay(prefix, STDOUT_FILENO, rank.log.get())});
  rank.streams.push_back({std::move(child.stderrPipe), LineRelay(prefix, STDERR_FILENO, rank.log.get())});
  rank.spec = std::move(launch.spec);
  ranks_.push_back(std::move(rank));
}

void Supervisor::startReplacements() {
  for (Replacement& replacement : std::exchange(replacements_, {})) replace(std::move(replacement));
}

void Supervisor::replace(Replacement replacement) {
  if (ending_) {  // interrupted or timed out since the failure
    unreplacedFailure_ = true;
    return;
  }
  try {
    const int slot = config_.worldSize + claimReplacementSlot();
    std::vector<std::string>& environment = replacement.launch.spec.environment;
    // A replacement's replacement gets a slot of its own.
    std::erase_if(environment, [](const std::string& entry) {
      return entry.starts_with("COMM_JOIN=") || entry.starts_with("COMM_LAUNCH_SLOT=");
    });
    environment.push_back("COMM_JOIN=1");
    environment.push_back(fmt::format("COMM_LAUNCH_SLOT={}", slot));
    launch(std::move(replacement.launch), slot);
    ++replacementsStarted_;
    writeAll(STDERR_FILENO, fmt::format("commrun: {}; replacement {} of {} starts as launch slot {} (--replace)\n",
                                        replacement.failure, replacementsStarted_, config_.replaceLimit, slot));
  } catch (const std::exception& error) {
    unreplacedFailure_ = true;
    writeAll(STDERR_FILENO, fmt::format("commrun: {}; could not start its replacement: {}{}\n", replacement.failure,
                                        error.what(), anyRunning() ? "; the others go on (--keep-going)" : ""));
  }
}

// Through the store, so that the commruns of a job's nodes never hand out
// the same slot.
int Supervisor::claimReplacementSlot() {
  try {
    const comm::Deadline deadline(kStoreTimeout);
    comm::bootstrap::StoreClient store(config_.storeHost, config_.storePort, config_.secret, deadline);
    return static_cast<int>(store.add(keys::kReplacements, 1, deadline) - 1);
  } catch (const comm::Error& error) {
    throw std::runtime_error(fmt::format("no launch slot from the store: {}", error.what()));
  }
}

void Supervisor::handleSignals() {
  signalfd_siginfo info;
  while (read(signalFd_, &info, sizeof(info)) == sizeof(info)) {
    if (static_cast<int>(info.ssi_signo) == SIGCHLD) {
      reapChildren();
    } else {
      interrupted(static_cast<int>(info.ssi_signo));
    }
  }
}

void Supervisor::reapChildren() {
  // SIGCHLDs merge, so one may stand for several children.
  for (;;) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    const pid_t pid = info.si_pid;
    // The rank is over, so are processes it left behind in its group. Until
    // the leader is reaped below its pid, and so the group id, cannot be
    // reused: this kill cannot reach a stranger.
    kill(-pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    auto rank = std::find_if(ranks_.begin(), ranks_.end(), [pid](const Rank& r) { return r.pid == pid; });
    if (rank != ranks_.end()) rankExited(*rank, status);
  }
}

void Supervisor::rankExited(Rank& rank, int waitStatus) {
  const pid_t pid = std::exchange(rank.pid, -1);
  if (exitedCleanly(waitStatus)) return;
  if (!config_.agentHosts.empty()) {
    // Told once its output is drained: the agent's last line may still be in the pipe.
    const bool first = settle({exitCodeOf(waitStatus), {}, AgentExit{&rank - ranks_.data(), pid, waitStatus}});
    afterFailure(first, describeAgentExit(rank, pid, waitStatus));
    return;
  }
  const std::string slot = rank.slot != rank.rank ? fmt::format("launch slot {}, ", rank.slot) : std::string();
  const std::string description =
      fmt::format("rank {} ({}pid {} on {}) {}", rank.rank, slot, pid, hostName_, describeExit(waitStatus));
  const bool first = settle({exitCodeOf(waitStatus), description});
  if (first || config_.keepGoing) recordFailure(rank.slot, description, first);
  if (config_.replaceLimit == 0) {
    afterFailure(first, description);
    return;
  }
  const size_t replaceable = static_cast<size_t>(config_.replaceLimit - replacementsStarted_);
  if (!ending_ && replacements_.size() < replaceable) {
    if (!first) laterFailures_.push_back(description);
    replacements_.push_back({{rank.rank, rank.spec}, description});
    return;
  }
  unreplacedFailure_ = true;
  afterFailure(first, description,
               ending_ ? std::string() : fmt::format("; not replaced: --replace {} is used up", config_.replaceLimit));
}

void Supervisor::afterFailure(bool first, const std::string& description, std::string_view unreplaced) {
  if (!config_.keepGoing) {
    if (first) graceEndsAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(config_.grace);
    return;
  }
  if (!first) laterFailures_.push_back(description);
  if (anyRunning()) {
    writeAll(STDERR_FILENO, fmt::format("commrun: {}{}; the others go on (--keep-going)\n", description, unreplaced));
  }
}

void Supervisor::interrupted(int signal) {
  ending_ = true;
  if (interruptions_++ > 0) {
    signalRanks(SIGKILL);  // asked twice: no more patience
    return;
  }
  settle({128 + signal, fmt::format("interrupted by SIG{}; forwarded it to every rank", sigabbrev_np(signal))});
  signalRanks(signal);
  if (!killAt_) killAt_ = Clock::now() + kKillDelay;
}

void Supervisor::fireTimers() {
  const auto now = Clock::now();
  auto due = [now](Timer& timer) {
    if (!timer || now < *timer) return false;
    timer.reset();
    return true;
  };
  if (due(timeoutAt_)) {
    ending_ = true;
    settle({124, fmt::format("timed out after {} s; stopped every rank", config_.timeout->count())});
    terminateRanks();
  }
  if (due(graceEndsAt_)) terminateRanks();
  if (due(killAt_)) signalRanks(SIGKILL);
  if (due(drainUntil_)) {
    for (Rank& rank : ranks_) {
      for (Stream& stream : rank.streams) {
        stream.relay.finish();
        stream.fd.reset();
      }
    }
  }
}

void Supervisor::pump(Stream& stream) {
  ssize_t got = read(stream.fd.get(), buffer_.data(), buffer_.size());
  if (got > 0) {
    stream.relay.feed(std::string_view(buffer_.data(), got));
  } else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    stream.relay.finish();
    stream.fd.reset();
  }
}

void Supervisor::terminateRanks() {
  signalRanks(SIGTERM);
  if (!killAt_) killAt_ = Clock::now() + kKillDelay;
}

void Supervisor::signalRanks(int signal) {
  for (const Rank& rank : ranks_) {
    if (rank.pid > 0) kill(-rank.pid, signal);
  }
}

bool Supervisor::settle(Outcome outcome) {
  if (outcome_) return false;
  outcome_ = std::move(outcome);
  return true;
}

// Ranks on every node can read why the job is ending (key "commrun/failed")
// instead of only seeing their peers vanish. Only the job's first failure
// is recorded there: ranks that exit because of it, on this node or
// another, must not hide it. Under --keep-going every failed rank's end is
// recorded too, so that survivors on other nodes learn of each one.
void Supervisor::recordFailure(int rank, const std::string& description, bool first) {
  try {
    const comm::Deadline deadline(kStoreTimeout);
    comm::bootstrap::StoreClient store(config_.storeHost, config_.storePort, config_.secret, deadline);
    if (config_.keepGoing) store.set(keys::rankFailed(rank), description, deadline);
    if (first && store.add(keys::kFailures, 1, deadline) == 1) store.set(keys::kFailed, description, deadline);
  } catch (const comm::Error& error) {
    writeAll(STDERR_FILENO, fmt::format("commrun: could not record the failure in the store: {}\n", error.what()));
  }
}

void Supervisor::recordKeepGoing() {
  try {
    const comm::Deadline deadline(kStoreTimeout);
    comm::bootstrap::StoreClient store(config_.storeHost, config_.storePort, config_.secret, deadline);
    store.set(keys::kKeepGoing, "1", deadline);
  } catch (const comm::Error& error) {
    writeAll(STDERR_FILENO, fmt::format("commrun: could not record --keep-going in the store: {}\n", error.what()));
  }
}

std::optional<std::string> Supervisor::firstFailureInJob() {
  try {
    const comm::Deadline deadline(kStoreTimeout);
    comm::bootstrap::StoreClient store(config_.storeHost, config_.storePort, config_.secret, deadline);
    // The first failure's node counts it before it writes it.
    if (!store.check(keys::kFailures, deadline)) return std::nullopt;
    return store.get(keys::kFailed, deadline);
  } catch (const comm::Error&) {
    // The store went with node 0's commrun: this node's own failure is all there is to tell.
    return std::nullopt;
  }
}

// A host's commrun ends with a line naming the job's first failure; that
// line is the job's. Anything else (ssh could not connect, no commrun
// there) is told with the agent's last words.
std::string Supervisor::describeAgentExit(const Rank& agent, pid_t pid, int waitStatus) const {
  constexpr std::string_view kCommrun = "commrun: ";
  const std::string& last = agent.streams.size() > 1 ? agent.streams[1].relay.lastLine() : std::string();
  if (last.starts_with(kCommrun)) return last.substr(kCommrun.size());
  return fmt::format("{} (node {}): launcher agent (pid {}) {}{}{}", config_.agentHosts[agent.rank], agent.rank, pid,
                     describeExit(waitStatus), last.empty() ? "" : ": ", last);
}

bool Supervisor::anyRunning() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& rank) { return rank.pid > 0; });
}

int Supervisor::timeoutMs() const {
  Timer next;
  for (const Timer& timer : {timeoutAt_, graceEndsAt_, killAt_, drainUntil_}) {
    if (timer && (!next || *timer < *next)) next = timer;
  }
  if (!next) return -1;
  // Rounded up: waking before the timer is due would spin until it is.
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

}  // namespace commrun
