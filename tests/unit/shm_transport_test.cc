// The direct shared-memory transport between real processes. The cmocka
// process only forks and relays: each case forks its ranks before anything
// touches shared memory or libfabric, and the ranks exchange address blobs
// and meet at barriers through pipes to the parent, which answers each round
// once every rank has spoken. Ranks report failures through their exit status.
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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
#include "common/error.h"
#include "common/shm_segment.h"
#include "transport/hybrid_transport.h"
#include "transport/shm/channel.h"
#include "transport/shm/shm_transport.h"

#include "transport_test_support.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace transport_test;

using comm::Deadline;
using comm::transport::Options;
using comm::transport::PeerInfo;
using comm::transport::Request;
using comm::transport::ShmMode;
using comm::transport::ShmOptions;
using comm::transport::Transport;
using namespace std::chrono_literals;

// The eager limit of the nodes these tests make (2 to 4 ranks).
constexpr size_t kSlot = comm::transport::shmSlotPayload(comm::transport::shmSlotBytes(2));

// Blocking pipe I/O of whole buffers; false at end of file.
bool readAll(int fd, void* data, size_t size) {
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

void writeAll(int fd, const void* data, size_t size) {
  const auto* at = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("pipe write failed: {}", std::strerror(errno)));
    at += n;
    size -= static_cast<size_t>(n);
  }
}

void writeMessage(int fd, const Bytes& message) {
  uint32_t length = static_cast<uint32_t>(message.size());
  writeAll(fd, &length, sizeof length);
  writeAll(fd, message.data(), message.size());
}

bool readMessage(int fd, Bytes& message) {
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

  void connect(const ShmOptions& options) {
    transport = comm::transport::createShmTransport(options);
    transport->connect(rank, exchange(transport->localAddress()));
  }
};

using Body = std::function<void(Rank&)>;

// The /dev/shm entries this transport created for `pid`.
std::vector<std::string> segmentsOf(pid_t pid) {
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
};

// Forks `size` ranks running `body` and relays their rounds until all have
// finished; fails the test when a rank fails (other than `killedRank`, which
// is expected to die of SIGKILL) or the run exceeds `timeout`, and when any
// rank left a segment in /dev/shm.
void runRanks(int size, const Body& body, int killedRank = -1, std::chrono::seconds timeout = kRanksPatience) {
  std::fflush(nullptr);
  std::vector<Child> children;
  for (int rank = 0; rank < size; ++rank) {
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
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
        self.barrier();  // nobody unmaps rings a peer still uses
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
      }
      if (deadline.expired()) {
        std::fprintf(stderr, "ranks still running after %lld s, killing them\n",
                     static_cast<long long>(timeout.count()));
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
    int status = 0;
    waitpid(children[rank].pid, &status, 0);
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
  assert_int_equal(failures, 0);
}

ShmOptions mode(ShmMode m) { return ShmOptions{m}; }
const ShmOptions kAuto = mode(ShmMode::kAuto);
const ShmOptions kAttach = mode(ShmMode::kAttach);
const ShmOptions kCopy = mode(ShmMode::kCopy);

// Both ranks send to each other at once, every size around the slot and
// beyond, data verified; then one way only, each direction in turn.
void exchangeSizes(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    CHECK(self.transport->providerFor(self.peer()) == "shm-direct", "peer over {}",
          self.transport->providerFor(self.peer()));
    // Every rank has mapped every segment: the names are gone already.
    self.barrier();
    CHECK(segmentsOf(getpid()).empty(), "/dev/shm/{} still there after connect", segmentsOf(getpid())[0]);
    const size_t sizes[] = {0, 1, 8, kSlot - 1, kSlot, kSlot + 1, 3 * kSlot + 5, kMiB + 3, 64 * kMiB};
    for (size_t size : sizes) {
      Bytes out = pattern(size, self.rank + size);
      Bytes in(size, 0);
      Request sent, received;
      uint64_t tag = 0x1000 + size;
      self.transport->recv(self.peer(), tag, in.data(), size, received);
      self.transport->send(self.peer(), tag, out.data(), size, sent);
      waitOk(*self.transport, sent);
      waitOk(*self.transport, received);
      CHECK(received.bytes == size, "received {} bytes of {}", received.bytes, size);
      checkPattern(in, size, self.peer() + size);
    }
    for (int sender = 0; sender < 2; ++sender) {
      for (size_t size : sizes) {
        Request request;
        Bytes data = self.rank == sender ? pattern(size, 77 + size) : Bytes(size, 0);
        if (self.rank == sender) {
          self.transport->send(self.peer(), 5, data.data(), size, request);
        } else {
          self.transport->recv(self.peer(), 5, data.data(), size, request);
        }
        waitOk(*self.transport, request);
        if (self.rank != sender) checkPattern(data, size, 77 + size);
      }
    }
  });
}

void test_sizes(void**) { exchangeSizes(kAttach); }
void test_sizes_auto(void**) { exchangeSizes(kAuto); }
void test_sizes_copy(void**) { exchangeSizes(kCopy); }

// A rank sends to itself through its own ring.
void test_self(void**) {
  runRanks(1, [&](Rank& self) {
    self.connect(kAttach);
    for (size_t size : {size_t{0}, size_t{100}, kSlot + 1, 5 * kMiB}) {
      Bytes out = pattern(size, size), in(size, 0);
      Request sent, received;
      self.transport->send(0, 9, out.data(), size, sent);
      self.transport->recv(0, 9, in.data(), size, received);
      waitOk(*self.transport, sent);
      waitOk(*self.transport, received);
      checkPattern(in, size, size);
    }
  });
}

// Sends land before their receives are posted, and the receives come in the
// opposite order.
void unexpected(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    Bytes small = pattern(1024, 1), large = pattern(64 * kMiB, 2), empty;
    Request first, second, third;
    if (self.rank == 0) {
      self.transport->send(1, 7, small.data(), small.size(), first);
      self.transport->send(1, 8, large.data(), large.size(), second);
      self.transport->send(1, 9, empty.data(), 0, third);
    }
    self.pump(100ms);
    self.barrier();
    if (self.rank == 1) {
      std::fill(small.begin(), small.end(), 0);
      std::fill(large.begin(), large.end(), 0);
      self.transport->recv(0, 9, empty.data(), 0, third);
      self.transport->recv(0, 8, large.data(), large.size(), second);
      self.transport->recv(0, 7, small.data(), small.size(), first);
    }
    waitOk(*self.transport, first);
    waitOk(*self.transport, second);
    waitOk(*self.transport, third);
    checkPattern(small, small.size(), 1);
    checkPattern(large, large.size(), 2);
  });
}

void test_unexpected(void**) { unexpected(kAttach); }
void test_unexpected_copy(void**) { unexpected(kCopy); }

// Tags that differ only in the top bit (or the bottom one) stay apart when
// received in the opposite order; one tag keeps its messages in order, eager
// and rendezvous mixed, whether the receives come before or after the sends.
void tagsAndOrder(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    const uint64_t tags[] = {0x8000000000000001ULL, 0x0000000000000001ULL, ~0ULL, ~0ULL - 1};
    const size_t sizes[] = {3000, 70000, 5, 300000};
    auto orderedSize = [](int i) { return i % 3 == 0 ? kSlot + 1000 * i : 17 + 1000 * i; };
    constexpr int kOrdered = 12;
    for (bool receivesFirst : {true, false}) {
      std::vector<Bytes> buffers(4 + kOrdered);
      std::vector<Request> requests(4 + kOrdered);
      auto receive = [&] {
        for (int i = 3; i >= 0; --i) {
          buffers[i].assign(sizes[i], 0);
          self.transport->recv(0, tags[i], buffers[i].data(), sizes[i], requests[i]);
        }
        for (int i = 0; i < kOrdered; ++i) {
          buffers[4 + i].assign(orderedSize(i), 0);
          self.transport->recv(0, 0x5A5A, buffers[4 + i].data(), orderedSize(i), requests[4 + i]);
        }
      };
      if (self.rank == 1 && receivesFirst) receive();
      self.barrier();
      if (self.rank == 0) {
        for (int i = 0; i < 4; ++i) {
          buffers[i] = pattern(sizes[i], i);
          self.transport->send(1, tags[i], buffers[i].data(), sizes[i], requests[i]);
        }
        for (int i = 0; i < kOrdered; ++i) {
          buffers[4 + i] = pattern(orderedSize(i), 100 + i);
          self.transport->send(1, 0x5A5A, buffers[4 + i].data(), orderedSize(i), requests[4 + i]);
        }
      }
      if (self.rank == 1 && !receivesFirst) {
        self.pump(50ms);
        receive();
      }
      for (Request& request : requests) waitOk(*self.transport, request);
      if (self.rank == 1) {
        for (int i = 0; i < 4; ++i) checkPattern(buffers[i], sizes[i], i);
        for (int i = 0; i < kOrdered; ++i) checkPattern(buffers[4 + i], orderedSize(i), 100 + i);
      }
      self.barrier();
    }
  });
}

void test_tags_and_order(void**) { tagsAndOrder(kAttach); }
void test_tags_and_order_copy(void**) { tagsAndOrder(kCopy); }

// A receive of the wrong size fails with COMM_ERR_MISMATCH naming both sizes,
// shorter or longer, eager or rendezvous, posted before or after the message,
// in both directions; the sender completes and the pair keeps working.
void mismatch(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    const std::pair<size_t, size_t> cases[] = {
        {1000, 2000},     {2000, 1000},     {kSlot, kSlot + 1}, {kSlot + 1, kSlot},
        {3 * kMiB, kMiB}, {kMiB, 3 * kMiB}, {10000, 0},         {0, 10},
    };
    uint64_t tag = 0x700;
    for (int sender = 0; sender < 2; ++sender) {
      for (bool postedFirst : {true, false}) {
        for (auto [sent, expected] : cases) {
          ++tag;
          Bytes buffer = pattern(std::max(sent, expected), 3);
          Request request;
          if (self.rank == sender) {
            if (postedFirst) self.barrier();
            self.transport->send(self.peer(), tag, buffer.data(), sent, request);
            if (!postedFirst) self.barrier();
            waitOk(*self.transport, request);
          } else {
            if (postedFirst) {
              self.transport->recv(self.peer(), tag, buffer.data(), expected, request);
              self.barrier();
            } else {
              self.barrier();
              self.pump(5ms);  // the message arrives unexpected
              self.transport->recv(self.peer(), tag, buffer.data(), expected, request);
            }
            waitFor(*self.transport, request);
            CHECK(request.status == COMM_ERR_MISMATCH, "sent {} expected {}: status {} ({})", sent, expected,
                  static_cast<int>(request.status), request.error);
            std::string says =
                fmt::format("from rank {} with tag {:#x} is {} bytes, expected {}", self.peer(), tag, sent, expected);
            CHECK(request.error.find(says) != std::string::npos, "message \"{}\" lacks \"{}\"", request.error, says);
          }
          // The next message of the same pair arrives intact.
          for (size_t size : {size_t{5000}, 2 * kSlot}) {
            Bytes data = self.rank == sender ? pattern(size, tag) : Bytes(size, 0);
            Request after;
            if (self.rank == sender) {
              self.transport->send(self.peer(), tag, data.data(), size, after);
            } else {
              self.transport->recv(self.peer(), tag, data.data(), size, after);
            }
            waitOk(*self.transport, after);
            if (self.rank != sender) checkPattern(data, size, tag);
          }
        }
      }
    }
  });
}

void test_mismatch(void**) { mismatch(kAttach); }
void test_mismatch_copy(void**) { mismatch(kCopy); }

// A cancelled receive is done with COMM_ERR_ABORTED and its buffer is left
// alone; a message sent afterwards goes to the next receive of its tag.
void cancelReceive(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    for (size_t size : {size_t{100}, 3 * kSlot + 5}) {
      Bytes buffer(size, 0xEE);
      Request request;
      self.transport->recv(self.peer(), 0xDEAD, buffer.data(), buffer.size(), request);
      self.pump(20ms);
      CHECK(!request.done.load(), "receive completed with nothing sent");
      self.transport->cancel(request);
      CHECK(request.done.load(), "not done after cancel");
      CHECK(request.status == COMM_ERR_ABORTED, "status {} ({})", static_cast<int>(request.status), request.error);
      self.barrier();
      CHECK(std::all_of(buffer.begin(), buffer.end(), [](uint8_t byte) { return byte == 0xEE; }),
            "the cancelled receive wrote to its buffer");
      Bytes out = pattern(size, self.rank);
      Request sent, received;
      self.transport->recv(self.peer(), 0xDEAD, buffer.data(), buffer.size(), received);
      self.transport->send(self.peer(), 0xDEAD, out.data(), out.size(), sent);
      waitOk(*self.transport, sent);
      waitOk(*self.transport, received);
      checkPattern(buffer, size, self.peer());
      self.barrier();
    }
  });
}

void test_cancel(void**) { cancelReceive(kAttach); }
void test_cancel_copy(void**) { cancelReceive(kCopy); }

// A receive cancelled while its large message is being copied (progress
// runs on a second thread): the cancel waits for the copy in flight, the
// buffer does not change afterwards, the sender completes and the pair
// keeps working.
uint64_t checksum(const Bytes& data) {
  uint64_t sum = 0;
  for (size_t i = 0; i + 8 <= data.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, &data[i], 8);
    sum = sum * 31 + word;
  }
  return sum;
}

void cancelMatched(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    const size_t size = 256 * kMiB;
    Bytes data = self.rank == 0 ? pattern(size, 4) : Bytes(size, 0);
    Request request;
    if (self.rank == 0) {
      self.transport->send(1, 3, data.data(), size, request);
      waitOk(*self.transport, request);
    } else {
      self.transport->recv(0, 3, data.data(), size, request);
      std::thread progress([&] {
        while (!request.done.load()) self.transport->progress();
      });
      // Once the first bytes have landed the copy is under way.
      while (std::atomic_ref<uint8_t>(data[0]).load(std::memory_order_relaxed) == 0) std::this_thread::yield();
      self.transport->cancel(request);
      progress.join();
      CHECK(request.done.load(), "not done after cancel");
      CHECK(request.status == COMM_ERR_ABORTED, "status {} ({})", static_cast<int>(request.status), request.error);
      uint64_t before = checksum(data);
      self.pump(50ms);
      CHECK(checksum(data) == before, "the buffer changed after cancel");
    }
    self.barrier();
    Bytes small = self.rank == 0 ? pattern(3 * kSlot, 8) : Bytes(3 * kSlot, 0);
    Request after;
    if (self.rank == 0) {
      self.transport->send(1, 3, small.data(), small.size(), after);
    } else {
      self.transport->recv(0, 3, small.data(), small.size(), after);
    }
    waitOk(*self.transport, after);
    if (self.rank == 1) checkPattern(small, small.size(), 8);
  });
}

void test_cancel_matched(void**) { cancelMatched(kAttach); }
void test_cancel_matched_copy(void**) { cancelMatched(kCopy); }

// Every rank sends a distinct message to every rank, itself included.
void allToAll(const ShmOptions& options) {
  runRanks(4, [&](Rank& self) {
    self.connect(options);
    auto sizeFrom = [](int from, int to) {
      return (from + to) % 2 == 0 ? 100 + 10 * from + to : 200000 + 4096 * from + to;
    };
    std::vector<Bytes> out, in;
    std::vector<Request> sends(self.size), receives(self.size);
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
  });
}

void test_all_to_all(void**) { allToAll(kAttach); }
void test_all_to_all_copy(void**) { allToAll(kCopy); }

// Far more messages than a ring holds, posted without progress in between:
// the overflow waits in the backlog and still matches in order.
void test_many_outstanding(void**) {
  runRanks(2, [&](Rank& self) {
    self.connect(kAttach);
    constexpr int kMessages = 3000;
    auto sizeOf = [](int i) { return static_cast<size_t>(i % 7 == 0 ? 20000 : 8 + i % 61); };
    std::vector<Bytes> buffers;
    std::vector<Request> requests(kMessages);
    for (int i = 0; i < kMessages; ++i) {
      if (self.rank == 0) {
        buffers.push_back(pattern(sizeOf(i), i));
        self.transport->send(1, 77, buffers.back().data(), sizeOf(i), requests[i]);
      } else {
        buffers.emplace_back(sizeOf(i));
        self.transport->recv(0, 77, buffers.back().data(), sizeOf(i), requests[i]);
      }
    }
    for (Request& request : requests) waitOk(*self.transport, request);
    if (self.rank == 1) {
      for (int i = 0; i < kMessages; ++i) checkPattern(buffers[i], sizeOf(i), i);
    }
  });
}

// Two threads per rank exchange messages on their own tags at once, both
// driving progress: a request completes whichever thread reaps it.
void threads(const ShmOptions& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    constexpr int kThreads = 2;
    std::exception_ptr failures[kThreads];
    auto worker = [&](int thread) {
      try {
        for (int i = 0; i < 300; ++i) {
          size_t size = i % 10 == 0 ? 3 * kMiB + i : 1 + (i * 997) % 70000;
          uint64_t tag = uint64_t(thread) << 32 | i;
          Bytes out = pattern(size, self.rank * 1000 + thread + i);
          Bytes in(size);
          Request sent, received;
          self.transport->recv(self.peer(), tag, in.data(), size, received);
          self.transport->send(self.peer(), tag, out.data(), size, sent);
          waitOk(*self.transport, sent);
          waitOk(*self.transport, received);
          checkPattern(in, size, self.peer() * 1000 + thread + i);
        }
      } catch (...) {
        failures[thread] = std::current_exception();
      }
    };
    std::vector<std::thread> workers;
    for (int thread = 0; thread < kThreads; ++thread) workers.emplace_back(worker, thread);
    for (std::thread& t : workers) t.join();
    for (std::exception_ptr& failure : failures) {
      if (failure) std::rethrow_exception(failure);
    }
  });
}

void test_threads(void**) { threads(kAttach); }
void test_threads_copy(void**) { threads(kCopy); }

// More than 2 GiB in one message, checked by sampling (untouched anonymous
// pages read as zero: only the sampled bytes get written).
void over2GiB(const ShmOptions& options) {
  const size_t size = (size_t{2} << 30) + 4096 + 3;
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mapping != MAP_FAILED, "mmap of {} bytes", size);
    auto* data = static_cast<uint8_t*>(mapping);
    auto sample = [&](size_t k) { return std::min(size - 1, k * kMiB + (k * 7919) % kMiB); };
    const size_t samples = size / kMiB + 1;
    for (size_t k = 0; k < samples; ++k) data[sample(k)] = self.rank == 0 ? static_cast<uint8_t>(k * 31 + 1) | 1 : 0;
    Request request;
    if (self.rank == 0) {
      self.transport->send(1, 42, data, size, request);
    } else {
      self.transport->recv(0, 42, data, size, request);
    }
    // Streamed, 2 GiB take both ranks taking turns: slow when the cores are
    // shared, which kPatience allows for.
    waitOk(*self.transport, request);
    if (self.rank == 1) {
      CHECK(request.bytes == size, "received {} of {} bytes", request.bytes, size);
      for (size_t k = 0; k < samples; ++k) {
        CHECK(data[sample(k)] == (static_cast<uint8_t>(k * 31 + 1) | 1), "sample {} at byte {}", k, sample(k));
      }
    }
    munmap(mapping, size);
  });
}

void test_over_2GiB(void**) { over2GiB(kAttach); }
void test_over_2GiB_copy(void**) { over2GiB(kCopy); }

// A peer that dies mid-conversation: progress() keeps returning promptly,
// a message it announced fails with COMM_ERR_REMOTE (Cross-Memory Attach) or
// can be cancelled (streamed), sends to it pile up without blocking, and the
// survivor cleans up.
void peerDeath(const ShmOptions& options) {
  runRanks(
      2,
      [&](Rank& self) {
        self.connect(options);
        Bytes large = pattern(8 * kMiB, 1);
        if (self.rank == 0) {
          Request announced;
          self.transport->send(1, 1, large.data(), large.size(), announced);
          self.barrier();
          raise(SIGKILL);
        }
        self.barrier();
        // The parent relays this round only once rank 0 is gone.
        self.barrier();
        Request request;
        self.transport->recv(0, 1, large.data(), large.size(), request);
        std::vector<Request> sends(100);
        for (Request& send : sends) self.transport->send(0, 2, large.data(), 100, send);
        Deadline deadline(300ms);
        while (!deadline.expired()) {
          auto begin = std::chrono::steady_clock::now();
          self.transport->progress();
          // Not a speed check: a progress() that blocked on the dead rank would
          // sit until a transport deadline; a busy machine delays it far less.
          CHECK(
              std::chrono::steady_clock::now() - begin < 5s, "progress() took {} us",
              std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begin).count());
          std::this_thread::sleep_for(100us);
        }
        if (options.mode == ShmMode::kAttach) {
          CHECK(request.done.load() && request.status == COMM_ERR_REMOTE, "status {} ({})",
                static_cast<int>(request.status), request.error);
          CHECK(request.error.find("rank 0") != std::string::npos, "\"{}\" does not name rank 0", request.error);
        } else {
          CHECK(!request.done.load(), "receive from a dead rank completed: {}", request.error);
          self.transport->cancel(request);
          CHECK(request.status == COMM_ERR_ABORTED, "status {} ({})", static_cast<int>(request.status), request.error);
        }
        CHECK(!sends.back().done.load(), "100 sends to a dead rank all completed");
      },
      0);
}

void test_peer_death(void**) { peerDeath(kAttach); }
void test_peer_death_copy(void**) { peerDeath(kCopy); }

// Ranks that may only run on fewer CPUs than there are of them (here both
// pinned to one) get Cross-Memory Attach by default: the receiver takes a
// large message while its sender waits on the parent without polling, which
// a streamed message could not do.
void test_auto_attaches_when_sharing_cpus(void**) {
  runRanks(2, [&](Rank& self) {
    cpu_set_t allowed;
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0, "sched_getaffinity: {}", std::strerror(errno));
    int first = 0;
    while (!CPU_ISSET(first, &allowed)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity: {}", std::strerror(errno));
    self.connect(kAuto);
    Bytes message = pattern(kMiB + 3, 5);
    Request request;
    if (self.rank == 0) {
      self.transport->send(1, 9, message.data(), message.size(), request);
      self.barrier();  // no progress until the receiver has the whole message
    } else {
      Bytes received(message.size());
      self.transport->recv(0, 9, received.data(), received.size(), request);
      waitFor(*self.transport, request);
      CHECK(request.status == COMM_OK && received == message, "status {}: {}", static_cast<int>(request.status),
            request.error);
      self.barrier();
    }
    waitOk(*self.transport, request);
    self.barrier();
  });
}

// connect() names a peer that exited before creating its segment instead of
// waiting for it.
void test_peer_death_at_connect(void**) {
  runRanks(
      2,
      [&](Rank& self) {
        auto transport = comm::transport::createShmTransport(kAttach);
        std::vector<PeerInfo> peers = self.exchange(transport->localAddress());
        if (self.rank == 1) raise(SIGKILL);
        try {
          transport->connect(0, peers);
        } catch (const comm::Error& error) {
          CHECK(error.status() == COMM_ERR_REMOTE, "status {} ({})", static_cast<int>(error.status()), error.what());
          CHECK(std::string(error.what()).find("rank 1") != std::string::npos, "\"{}\"", error.what());
          return;
        }
        CHECK(false, "connect to a dead rank succeeded");
      },
      1);
}

// A rank killed (kill -9) while waiting in connect leaves its segment's name
// behind; the next transport on the node to connect removes it.
void test_abandoned_segment_swept(void**) {
  int up[2];
  assert_int_equal(pipe(up), 0);
  std::fflush(nullptr);
  pid_t waiter = fork();
  if (waiter == 0) {
    close(up[0]);
    int status = 1;
    try {
      auto transport = comm::transport::createShmTransport(ShmOptions{ShmMode::kAuto, 60s});
      auto other = comm::transport::createShmTransport(kAttach);  // never connects: its segment never appears
      Bytes mine = transport->localAddress();
      writeAll(up[1], "x", 1);
      transport->connect(0, {{mine, true}, {other->localAddress(), true}});
    } catch (const std::exception& error) {
      std::fprintf(stderr, "waiter: %s\n", error.what());
    }
    _exit(status);
  }
  close(up[1]);
  char ready;
  assert_true(readAll(up[0], &ready, 1));
  close(up[0]);
  Deadline deadline(kPatience);
  while (segmentsOf(waiter).empty() && !deadline.expired()) std::this_thread::sleep_for(1ms);
  assert_int_equal(segmentsOf(waiter).size(), 1);
  kill(waiter, SIGKILL);
  int status = 0;
  waitpid(waiter, &status, 0);
  assert_int_equal(segmentsOf(waiter).size(), 1);
  runRanks(1, [&](Rank& self) { self.connect(kAttach); });
  assert_int_equal(segmentsOf(waiter).size(), 0);
}

// The composite: peers on the node over the direct path unless it is off or
// another provider is forced; peers elsewhere over libfabric, both at once.
void hybrid(const Options& ofiOptions, const ShmOptions& shm, bool sameNode, const char* expected) {
  runRanks(2, [&](Rank& self) {
    self.transport = comm::transport::createTransport(ofiOptions, shm);
    self.transport->connect(self.rank, self.exchange(self.transport->localAddress(), sameNode));
    CHECK(self.transport->providerFor(self.peer()) == expected, "peer over {}, expected {}",
          self.transport->providerFor(self.peer()), expected);
    for (int target : {self.peer(), self.rank}) {
      for (size_t size : {size_t{8}, 5 * kMiB}) {
        Bytes out = pattern(size, self.rank), in(size);
        Request sent, received;
        self.transport->recv(target, 1, in.data(), size, received);
        self.transport->send(target, 1, out.data(), size, sent);
        waitOk(*self.transport, sent);
        waitOk(*self.transport, received);
        checkPattern(in, size, target);
      }
    }
    Bytes buffer(100, 0xEE);
    Request request;
    self.transport->recv(self.peer(), 0xCA, buffer.data(), buffer.size(), request);
    self.transport->cancel(request);
    CHECK(request.done.load() && request.status == COMM_ERR_ABORTED, "status {} ({})", static_cast<int>(request.status),
          request.error);
  });
}

Options fabric(const char* provider, bool singleNode) {
  Options options;
  options.provider = provider;
  // What the world would pass: comm's tcp asks every peer to prove it.
  options.secret = "shm transport test secret 0123456789";
  options.singleNode = singleNode;
  return options;
}

void test_hybrid_direct(void**) { hybrid(fabric("", true), kAuto, true, "shm-direct"); }
void test_hybrid_forced_shm(void**) { hybrid(fabric("shm", true), kAuto, true, "shm-direct"); }
void test_hybrid_off(void**) { hybrid(fabric("", true), mode(ShmMode::kOff), true, "shm"); }
void test_hybrid_forced_tcp(void**) { hybrid(fabric("tcp", true), kAuto, true, "tcp"); }
void test_hybrid_forced_rxm(void**) { hybrid(fabric("tcp;ofi_rxm", true), kAuto, true, "tcp;ofi_rxm"); }
// The peer pretends to be on another node; each rank reaches itself directly.
void test_hybrid_remote(void**) { hybrid(fabric("", false), kAuto, false, "tcp;ofi_rxm"); }

void test_parse_mode(void**) {
  assert_true(comm::transport::parseShmMode("1") == ShmMode::kAuto);
  assert_true(comm::transport::parseShmMode("attach") == ShmMode::kAttach);
  assert_true(comm::transport::parseShmMode("0") == ShmMode::kOff);
  assert_true(comm::transport::parseShmMode("copy") == ShmMode::kCopy);
  try {
    comm::transport::parseShmMode("yes");
    assert_true(false);
  } catch (const comm::Error& error) {
    assert_int_equal(error.status(), COMM_ERR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(error.what(), "COMM_SHM='yes'"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_mode),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_sizes_auto),
      cmocka_unit_test(test_sizes_copy),
      cmocka_unit_test(test_self),
      cmocka_unit_test(test_unexpected),
      cmocka_unit_test(test_unexpected_copy),
      cmocka_unit_test(test_tags_and_order),
      cmocka_unit_test(test_tags_and_order_copy),
      cmocka_unit_test(test_mismatch),
      cmocka_unit_test(test_mismatch_copy),
      cmocka_unit_test(test_cancel),
      cmocka_unit_test(test_cancel_copy),
      cmocka_unit_test(test_cancel_matched),
      cmocka_unit_test(test_cancel_matched_copy),
      cmocka_unit_test(test_all_to_all),
      cmocka_unit_test(test_all_to_all_copy),
      cmocka_unit_test(test_many_outstanding),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_threads_copy),
      cmocka_unit_test(test_over_2GiB),
      cmocka_unit_test(test_over_2GiB_copy),
      cmocka_unit_test(test_peer_death),
      cmocka_unit_test(test_peer_death_copy),
      cmocka_unit_test(test_auto_attaches_when_sharing_cpus),
      cmocka_unit_test(test_peer_death_at_connect),
      cmocka_unit_test(test_abandoned_segment_swept),
      cmocka_unit_test(test_hybrid_direct),
      cmocka_unit_test(test_hybrid_forced_shm),
      cmocka_unit_test(test_hybrid_off),
      cmocka_unit_test(test_hybrid_forced_tcp),
      cmocka_unit_test(test_hybrid_forced_rxm),
      cmocka_unit_test(test_hybrid_remote),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
