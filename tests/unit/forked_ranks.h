// Ranks as real processes for the transport tests: each case forks its ranks
// before anything touches shared memory or libfabric (neither survives a
// fork), and the ranks exchange address blobs and meet at barriers through
// pipes to the parent, which answers each round once every rank has spoken.
// Ranks report failures through their exit status.
#pragma once

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/deadline.h"
#include "transport/transport.h"

#include "transport_test_support.h"

namespace transport_test {

using comm::Deadline;
using comm::transport::PeerInfo;
using comm::transport::Transport;

// Blocking pipe I/O of whole buffers; false at end of file.
inline bool readAll(int fd, void* data, size_t size) {
  auto* at = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

inline void writeAll(int fd, const void* data, size_t size) {
  const auto* at = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("pipe write failed: {}", std::strerror(errno)));
    at += n;
    size -= static_cast<size_t>(n);
  }
}

inline void writeMessage(int fd, const Bytes& message) {
  uint32_t length = static_cast<uint32_t>(message.size());
  writeAll(fd, &length, sizeof length);
  writeAll(fd, message.data(), message.size());
}

inline bool readMessage(int fd, Bytes& message) {
  uint32_t length = 0;
  if (!readAll(fd, &length, sizeof length)) return false;
  message.resize(length);
  return readAll(fd, message.data(), length);
}

struct Rank {
  int rank;
  int size;
  int toParent;
  int fromParent;
  std::unique_ptr<Transport> transport;

  int peer() const { return (rank + 1) % size; }

  // Every rank's `mine`, through the parent; progresses the transport while
  // waiting, since a peer may need this rank to finish what it started.
  std::vector<Bytes> allGather(const Bytes& mine) {
    writeMessage(toParent, mine);
    pollfd wait{fromParent, POLLIN, 0};
    while (poll(&wait, 1, 0) == 0) {
      if (!transport || !transport->progress()) std::this_thread::sleep_for(100us);
    }
    std::vector<Bytes> all(size);
    for (Bytes& message : all) CHECK(readMessage(fromParent, message), "the parent hung up");
    return all;
  }
  void barrier() { allGather({}); }

  // Progresses for a while without waiting for anything in particular.
  void pump(std::chrono::milliseconds duration) {
    Deadline deadline(duration);
    while (!deadline.expired()) {
      if (!transport->progress()) std::this_thread::sleep_for(200us);
    }
  }

  std::vector<PeerInfo> exchange(const Bytes& mine, bool sameNode = true) {
    std::vector<PeerInfo> peers;
    for (Bytes& address : allGather(mine)) peers.push_back({std::move(address), sameNode});
    peers[rank].sameNode = true;
    return peers;
  }

  // Takes `made` as this rank's transport and connects it to every rank's,
  // all of them on this node unless `sameNode` says otherwise.
  void connect(std::unique_ptr<Transport> made, bool sameNode = true) {
    transport = std::move(made);
    transport->connect(rank, exchange(transport->localAddress(), sameNode));
  }
};

using Body = std::function<void(Rank&)>;

// Every rank sends a distinct message of sizeFrom(from, to) bytes to every
// rank, itself included, and checks what it receives.
template <typename SizeFrom>
void exchangeWithEveryone(Rank& self, SizeFrom sizeFrom) {
  std::vector<Bytes> out, in;
  std::vector<comm::transport::Request> sends(self.size), receives(self.size);
  for (int peer = 0; peer < self.size; ++peer) {
    in.emplace_back(sizeFrom(peer, self.rank));
    self.transport->recv(peer, 0xA11, in.back().data(), in.back().size(), receives[peer]);
  }
  for (int peer = 0; peer < self.size; ++peer) {
    out.push_back(pattern(sizeFrom(self.rank, peer), self.rank * 10 + peer));
    self.transport->send(peer, 0xA11, out.back().data(), out.back().size(), sends[peer]);
  }
  for (int peer = 0; peer < self.size; ++peer) {
    waitOk(*self.transport, sends[peer]);
    waitOk(*self.transport, receives[peer]);
    checkPattern(in[peer], in[peer].size(), peer * 10 + self.rank);
  }
}

// The /dev/shm entries comm's transports created for `pid`.
inline std::vector<std::string> segmentsOf(pid_t pid) {
  std::vector<std::string> names;
  DIR* directory = opendir("/dev/shm");
  if (directory == nullptr) return names;
  const std::string infix = fmt::format(".{}.", pid);
  while (dirent* entry = readdir(directory)) {
    std::string name = entry->d_name;
    if (name.starts_with("comm.") && name.find(infix) != std::string::npos) names.push_back(name);
  }
  closedir(directory);
  return names;
}

struct Child {
  pid_t pid;
  int toParent;    // parent's read end
  int fromParent;  // parent's write end
  bool open;
  bool reaped = false;
  int status = 0;  // once reaped
};

// Reaps the ranks that have ended; true when one of them failed (any but
// `killedRank` that did not exit 0), so that the others, which may be
// waiting for it, need not run into their deadline.
inline bool someRankFailed(std::vector<Child>& children, int killedRank) {
  bool failed = false;
  for (size_t rank = 0; rank < children.size(); ++rank) {
    Child& child = children[rank];
    if (!child.reaped && waitpid(child.pid, &child.status, WNOHANG) == child.pid) child.reaped = true;
    if (child.reaped && static_cast<int>(rank) != killedRank) {
      failed = failed || !WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0;
    }
  }
  return failed;
}

// Forks `size` ranks running `body` and relays their rounds until all have
// finished; fails the test when a rank fails (other than `killedRank`, which
// is expected to die of SIGKILL) or the run exceeds `timeout`, and when any
// rank left a segment in /dev/shm. Returns how many of those went wrong, each
// told on stderr; the test asserts that it is none.
[[nodiscard]] inline int forkRanks(int size, const Body& body, int killedRank = -1,
                                   std::chrono::seconds timeout = kRanksPatience) {
  std::fflush(nullptr);
  std::vector<Child> children;
  for (int rank = 0; rank < size; ++rank) {
    int up[2], down[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe: {}", std::strerror(errno));
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: {}", std::strerror(errno));
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      for (const Child& earlier : children) {
        close(earlier.toParent);
        close(earlier.fromParent);
      }
      int status = 0;
      try {
        Rank self{rank, size, up[1], down[0], nullptr};
        body(self);
        self.barrier();  // nobody closes what a peer still uses
      } catch (const std::exception& error) {
        std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
        status = 1;
      }
      std::fflush(nullptr);
      _exit(status);
    }
    close(up[1]);
    close(down[0]);
    children.push_back({pid, up[0], down[1], true});
  }
  signal(SIGPIPE, SIG_IGN);
  // Rounds: one message from every rank still running, then all of them to each.
  Deadline deadline(timeout);
  bool broken = false;
  while (!broken) {
    std::vector<Bytes> messages(size);
    int finished = 0;
    for (int rank = 0; rank < size; ++rank) {
      Child& child = children[rank];
      pollfd wait{child.toParent, POLLIN, 0};
      while (poll(&wait, 1, 100) == 0 && !deadline.expired()) {
        if (someRankFailed(children, killedRank)) break;
      }
      if (deadline.expired()) {
        std::fprintf(stderr, "ranks still running after %lld s, killing them\n",
                     static_cast<long long>(timeout.count()));
        broken = true;
        break;
      }
      if (wait.revents == 0) {  // another rank failed
        broken = true;
        break;
      }
      if (!readMessage(child.toParent, messages[rank])) {
        child.open = false;
        ++finished;
      }
    }
    if (broken || finished == size) break;
    // Some rank left while others wait for it: only the killed one may.
    if (finished > 0) {
      int survivors = 0;
      for (const Child& child : children) survivors += child.open;
      bool onlyKilled = killedRank >= 0 && !children[killedRank].open && survivors == size - 1;
      // The survivors' rounds go on; the killed rank's message reads as empty.
      if (!onlyKilled) {
        broken = true;
        break;
      }
    }
    for (Child& child : children) {
      if (!child.open) continue;
      for (const Bytes& message : messages) writeMessage(child.fromParent, message);
    }
  }
  if (broken) {
    for (const Child& child : children) kill(child.pid, SIGKILL);
  }
  int failures = broken ? 1 : 0;
  for (int rank = 0; rank < size; ++rank) {
    if (!children[rank].reaped) waitpid(children[rank].pid, &children[rank].status, 0);
    const int status = children[rank].status;
    close(children[rank].toParent);
    close(children[rank].fromParent);
    bool ok = rank == killedRank ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
                                 : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
      std::fprintf(stderr, "rank %d ended with status %#x\n", rank, status);
      ++failures;
    }
    if (rank == killedRank) continue;
    for (const std::string& name : segmentsOf(children[rank].pid)) {
      std::fprintf(stderr, "rank %d left /dev/shm/%s\n", rank, name.c_str());
      ++failures;
    }
  }
  return failures;
}

}  // namespace transport_test
