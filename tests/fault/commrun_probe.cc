// A rank program for the commrun tests: reports what commrun gave it.
//   env                  the launch as detectLaunch reads it
//   rendezvous           meet every rank of the world through the store
//   await-failure <r>    rank r kills itself with SIGKILL; the others print
//                        the store's "commrun/failed" and exit 0
//   await-key <key>      waits for <key> in the store and prints
//                        "<key> = <value>"
//   cores                the cores (package:core) this process may run on
//   free-port            (not a rank) a loopback port nothing listens on now
//   guard                rank 0 stores "probe/private"; every rank waits
//                        for "probe/release", then says whether
//                        "commrun/failed" was forged meanwhile
//   stranger <port>      (not a rank, no secret) tries to read
//                        "probe/private" and to write "commrun/failed" and
//                        "probe/release" at the store on <port>
//   release <port>       (not a rank, with the secret) sets "probe/release"
//   hold <port> <n> <file>  (not a rank, no secret) opens n connections to
//                        the store on <port> (retrying until it listens),
//                        creates <file>, and holds them, silent, until killed
//   kill-on-segment <rank> <seconds> <VAR=value>  (not a rank) watches
//                        /dev/shm and kills, by SIGKILL, the process of
//                        COMM_RANK <rank> whose environment has VAR=value
//                        (its job's, not another test's) that creates a comm
//                        segment there, at once; prints its pid, or nothing
//                        after <seconds>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/job_secret.h"
#include "bootstrap/launch_environment.h"
#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "common/error.h"

namespace {

using comm::Deadline;
using comm::bootstrap::LaunchInfo;
using comm::bootstrap::StoreClient;
using namespace std::chrono_literals;

std::optional<std::string> environment(std::string_view name);

LaunchInfo launch() { return comm::bootstrap::detectLaunch(environment); }

std::optional<std::string> environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

StoreClient connect(const LaunchInfo& info) {
  std::optional<std::string> secret = comm::bootstrap::findJobSecret(environment, false, Deadline(20s));
  if (!secret) throw comm::Error(COMM_ERR_INVALID_ARGUMENT, "no job secret in the environment");
  return StoreClient(info.masterAddr, info.masterPort, *secret, Deadline(20s));
}

int printEnv() {
  LaunchInfo info = launch();
  fmt::print("rank={} size={} local={}/{} master={}:{} launcher={} hosted={}\n", info.rank, info.worldSize,
             info.localRank, info.localWorldSize, info.masterAddr, info.masterPort, info.launcher,
             info.storeHostedByLauncher ? 1 : 0);
  return 0;
}

int rendezvous() {
  LaunchInfo info = launch();
  StoreClient store = connect(info);
  store.set(fmt::format("probe/rank/{}", info.rank), std::to_string(info.localRank), Deadline(20s));
  std::vector<std::string> everyone;
  for (int rank = 0; rank < info.worldSize; ++rank) everyone.push_back(fmt::format("probe/rank/{}", rank));
  store.wait(everyone, Deadline(20s));
  fmt::print("rank={} size={} local={}/{} master={}:{} met every rank\n", info.rank, info.worldSize, info.localRank,
             info.localWorldSize, info.masterAddr, info.masterPort);
  return 0;
}

int awaitFailure(int victim) {
  LaunchInfo info = launch();
  if (info.rank == victim) {
    std::fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  StoreClient store = connect(info);
  fmt::print("commrun/failed = {}\n", store.get("commrun/failed", Deadline(20s)));
  return 0;
}

int awaitKey(const std::string& key) {
  StoreClient store = connect(launch());
  fmt::print("{} = {}\n", key, store.get(key, Deadline(20s)));
  return 0;
}

int printCores() {
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof(allowed), &allowed);
  std::set<std::pair<int, int>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const std::string topology = fmt::format("/sys/devices/system/cpu/cpu{}/topology/", cpu);
    int package = -1;
    int core = -1;
    std::ifstream(topology + "physical_package_id") >> package;
    std::ifstream(topology + "core_id") >> core;
    cores.emplace(package, core);
  }
  std::vector<std::string> names;
  for (auto [package, core] : cores) names.push_back(fmt::format("{}:{}", package, core));
  fmt::print("cores={}\n", fmt::join(names, ","));
  return 0;
}

int guard() {
  LaunchInfo info = launch();
  StoreClient store = connect(info);
  if (info.rank == 0) store.set("probe/private", "private-value", Deadline(20s));
  fmt::print("ready port={}\n", info.masterPort);
  std::fflush(stdout);
  store.get("probe/release", Deadline(300s));
  fmt::print("released; commrun/failed {}\n", store.check("commrun/failed", Deadline(20s)) ? "forged" : "absent");
  return 0;
}

// Speaks the store's protocol without proving the secret, as a process of
// another user would, and reports what it got: nothing is the right answer.
int stranger(uint16_t port) {
  using comm::bootstrap::FrameWriter;
  using comm::bootstrap::StoreOp;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    fmt::print("stranger: cannot connect to port {}\n", port);
    return 1;
  }
  std::string requests = FrameWriter().u8(uint8_t(StoreOp::kGet)).u64(1).bytes("probe/private").finish();
  requests += FrameWriter().u8(uint8_t(StoreOp::kSet)).u64(2).bytes("commrun/failed").bytes("forged").finish();
  requests += FrameWriter().u8(uint8_t(StoreOp::kSet)).u64(3).bytes("probe/release").bytes("forged").finish();
  send(fd, requests.data(), requests.size(), MSG_NOSIGNAL);
  std::string got;
  char buffer[4096];
  const Deadline deadline(60s);
  bool closed = false;
  while (!closed && !deadline.expired() && got.find("private-value") == std::string::npos) {
    pollfd entry{fd, POLLIN, 0};
    if (poll(&entry, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    closed = n <= 0;
    if (n > 0) got.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const bool leaked = got.find("private-value") != std::string::npos;
  fmt::print("stranger: {}, {}\n", leaked ? "read probe/private" : "read nothing",
             closed ? "connection closed" : "connection left open");
  return leaked ? 1 : 0;
}

int release(uint16_t port) {
  std::optional<std::string> secret = comm::bootstrap::findJobSecret(environment, false, Deadline(20s));
  if (!secret) throw comm::Error(COMM_ERR_INVALID_ARGUMENT, "no job secret in the environment");
  StoreClient("127.0.0.1", port, *secret, Deadline(20s)).set("probe/release", "1", Deadline(20s));
  return 0;
}

int hold(uint16_t port, int count, const std::string& readyFile) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = std::max<rlim_t>(limit.rlim_cur, static_cast<rlim_t>(count) + 64);
  limit.rlim_max = std::max(limit.rlim_max, limit.rlim_cur);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    fmt::print(stderr, "hold: cannot allow {} descriptors\n", count + 64);
    return 1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  std::vector<int> held;
  const Deadline deadline(120s);
  while (static_cast<int>(held.size()) < count) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      held.push_back(fd);
      continue;
    }
    close(fd);
    if (deadline.expired()) {
      fmt::print(stderr, "hold: only {} of {} connections after 120 s\n", held.size(), count);
      return 1;
    }
    std::this_thread::sleep_for(10ms);
  }
  std::ofstream(readyFile) << held.size() << "\n";
  for (;;) pause();
}

// COMM_RANK in the environment of process `pid` when that environment
// also holds `mark`, else -1.
int rankOfMarkedProcess(pid_t pid, const std::string& mark) {
  std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  std::string variable;
  int rank = -1;
  bool marked = false;
  while (std::getline(in, variable, '\0')) {
    if (variable.starts_with("COMM_RANK=")) rank = std::atoi(variable.c_str() + 10);
    marked = marked || variable == mark;
  }
  return marked ? rank : -1;
}

int killOnSegment(int rank, int seconds, const std::string& mark) {
  int watch = inotify_init1(IN_CLOEXEC);
  if (watch < 0 || inotify_add_watch(watch, "/dev/shm", IN_CREATE) < 0) {
    fmt::print(stderr, "kill-on-segment: inotify on /dev/shm: {}\n", std::strerror(errno));
    return 1;
  }
  Deadline deadline(std::chrono::seconds{seconds});
  alignas(inotify_event) char events[16 * 1024];
  while (!deadline.expired()) {
    pollfd ready{.fd = watch, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    ssize_t length = read(watch, events, sizeof(events));
    for (ssize_t at = 0; at < length;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      // comm.<pid namespace>.<pid>.<nonce>
      unsigned long long space = 0;
      int pid = 0;
      if (event->len == 0 || std::sscanf(event->name, "comm.%llu.%d.", &space, &pid) != 2) continue;
      if (rankOfMarkedProcess(pid, mark) != rank || kill(pid, SIGKILL) != 0) continue;
      fmt::print("{}\n", pid);
      return 0;
    }
  }
  return 0;
}

int printFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 1;
  }
  fmt::print("{}\n", ntohs(address.sin_port));
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "env") return printEnv();
    if (mode == "rendezvous") return rendezvous();
    if (mode == "await-failure" && argc > 2) return awaitFailure(std::atoi(argv[2]));
    if (mode == "await-key" && argc > 2) return awaitKey(argv[2]);
    if (mode == "cores") return printCores();
    if (mode == "free-port") return printFreePort();
    if (mode == "guard") return guard();
    if (mode == "stranger" && argc > 2) return stranger(static_cast<uint16_t>(std::atoi(argv[2])));
    if (mode == "release" && argc > 2) return release(static_cast<uint16_t>(std::atoi(argv[2])));
    if (mode == "kill-on-segment" && argc > 4) return killOnSegment(std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
    if (mode == "hold" && argc > 4) return hold(static_cast<uint16_t>(std::atoi(argv[2])), std::atoi(argv[3]), argv[4]);
  } catch (const comm::Error& error) {
    fmt::print(stderr, "commrun_probe {}: {}\n", mode, error.what());
    return 1;
  }
  fmt::print(stderr,
             "usage: commrun_probe env | rendezvous | await-failure <rank> | await-key <key> | cores | free-port | "
             "guard | stranger <port> "
             "| release <port> | hold <port> <n> <file> | kill-on-segment <rank> <seconds> <VAR=value>\n");
  return 2;
}
