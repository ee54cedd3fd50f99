// The network transports between real processes: libfabric's and comm's own
// tcp (provider "tcp", tcp/tcp_transport.h), which share these cases. The cmocka process never
// touches libfabric: each case forks its ranks first (libfabric state must not
// cross fork), the ranks meet through a shared anonymous mapping (barrier and
// address exchange) and report failures through their exit status.
#include <arpa/inet.h>
#include <netinet/in.h>
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
#include "common/handshake.h"
#include "common/unique_fd.h"
#include "transport/hybrid_transport.h"
#include "transport/ofi/ofi_address.h"
#include "transport/ofi/ofi_transport.h"
#include "transport/tcp/tcp_transport.h"

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
using comm::transport::Transport;
using namespace std::chrono_literals;

constexpr int kMaxRanks = 8;
constexpr size_t kMaxBlob = 1024;

// What the ranks of one case share; lives in a MAP_SHARED mapping made before fork.
struct Shared {
  std::atomic<int> arrived;
  std::atomic<int> generation;
  uint32_t blobLength[kMaxRanks];
  uint8_t blob[kMaxRanks][kMaxBlob];
};

struct Rank {
  int rank;
  int size;
  Shared* shared;
  std::unique_ptr<Transport> transport;

  int peer() const { return (rank + 1) % size; }

  void barrier() {
    int generation = shared->generation.load(std::memory_order_acquire);
    if (shared->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == size) {
      shared->arrived.store(0, std::memory_order_relaxed);
      shared->generation.fetch_add(1, std::memory_order_release);
      return;
    }
    // Keep the transport progressing: a peer may need this rank's help to
    // finish what it started before the barrier.
    while (shared->generation.load(std::memory_order_acquire) == generation) {
      if (transport) transport->progress();
      std::this_thread::sleep_for(200us);
    }
  }

  // Calls progress for a while without waiting for anything in particular.
  void pump(std::chrono::milliseconds duration) {
    Deadline deadline(duration);
    while (!deadline.expired()) {
      transport->progress();
      std::this_thread::sleep_for(1ms);
    }
  }

  std::vector<PeerInfo> exchange(const std::vector<uint8_t>& mine, const std::vector<bool>& sameNode) {
    CHECK(mine.size() <= kMaxBlob, "address of {} bytes", mine.size());
    std::memcpy(shared->blob[rank], mine.data(), mine.size());
    shared->blobLength[rank] = static_cast<uint32_t>(mine.size());
    barrier();
    std::vector<PeerInfo> peers(size);
    for (int r = 0; r < size; ++r) {
      peers[r].address.assign(shared->blob[r], shared->blob[r] + shared->blobLength[r]);
      peers[r].sameNode = sameNode[r];
    }
    barrier();
    return peers;
  }

  void connect(const Options& options, bool sameNode = true) {
    transport = comm::transport::createNetworkTransport(options);
    std::vector<bool> local(size, sameNode);
    local[rank] = true;
    transport->connect(rank, exchange(transport->localAddress(), local));
  }
};

using Body = std::function<void(Rank&)>;

// Forks `size` ranks running `body`; fails the test when any rank fails or
// the whole run exceeds `timeout`.
void runRanks(int size, const Body& body, std::chrono::seconds timeout = kRanksPatience) {
  void* mapping = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(mapping != MAP_FAILED);
  auto* shared = new (mapping) Shared{};
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int rank = 0; rank < size; ++rank) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      int status = 0;
      try {
        Rank self{rank, size, shared, nullptr};
        body(self);
        self.barrier();  // nobody closes an endpoint a peer still uses
      } catch (const std::exception& error) {
        std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
        status = 1;
      }
      std::fflush(nullptr);
      _exit(status);
    }
    children.push_back(pid);
  }
  int failures = 0;
  Deadline deadline(timeout);
  size_t running = children.size();
  while (running > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ++failures;
        // One failed rank leaves the others waiting for it.
        for (pid_t child : children) kill(child, SIGKILL);
      }
      continue;
    }
    if (deadline.expired()) {
      std::fprintf(stderr, "ranks still running after %lld s, killing them\n", static_cast<long long>(timeout.count()));
      ++failures;
      for (pid_t child : children) kill(child, SIGKILL);
      deadline = Deadline(10s);
    }
    std::this_thread::sleep_for(2ms);
  }
  munmap(mapping, sizeof(Shared));
  assert_int_equal(failures, 0);
}

Options withProvider(const char* provider, size_t maxChunkBytes = 0) {
  Options options;
  options.provider = provider;
  options.singleNode = true;
  options.maxChunkBytes = maxChunkBytes;
  options.secret = "transport test secret 0123456789";
  return options;
}

// Both ranks send to each other at once, for every size, then to
// themselves; data verified.
void exchangeSizes(const Options& options, size_t largest = 64 * kMiB) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    for (int to : {self.peer(), self.rank}) {
      for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, kMiB + 3, largest}) {
        std::vector<uint8_t> out = pattern(size, self.rank);
        std::vector<uint8_t> in(size, 0);
        Request sent, received;
        uint64_t tag = 0x1000 + size;
        self.transport->recv(to, tag, in.data(), size, received);
        self.transport->send(to, tag, out.data(), size, sent);
        waitOk(*self.transport, sent);
        waitOk(*self.transport, received);
        CHECK(received.bytes == size, "received {} bytes of {} from rank {}", received.bytes, size, to);
        checkPattern(in, size, to);
      }
    }
  });
}

void test_shm_sizes(void**) { exchangeSizes(withProvider("shm")); }
void test_tcp_sizes(void**) { exchangeSizes(withProvider("tcp")); }
void test_rxm_sizes(void**) { exchangeSizes(withProvider("tcp;ofi_rxm")); }
// Chunks of 1 MiB + 1: 8 MiB + 5 travels as 8 full chunks and a short one.
void test_rxm_sizes_chunked(void**) { exchangeSizes(withProvider("tcp;ofi_rxm", kMiB + 1), 8 * kMiB + 5); }

// Sends land before their receives are posted (the provider's unexpected queue).
void unexpected(const Options& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    std::vector<uint8_t> small = pattern(1024, 1);
    std::vector<uint8_t> large = pattern(64 * kMiB, 2);
    Request first, second;
    if (self.rank == 0) {
      self.transport->send(1, 7, small.data(), small.size(), first);
      self.transport->send(1, 8, large.data(), large.size(), second);
    }
    self.pump(200ms);
    self.barrier();
    if (self.rank == 1) {
      std::fill(small.begin(), small.end(), 0);
      std::fill(large.begin(), large.end(), 0);
      self.transport->recv(0, 8, large.data(), large.size(), second);
      self.transport->recv(0, 7, small.data(), small.size(), first);
    }
    waitOk(*self.transport, first);
    waitOk(*self.transport, second);
    checkPattern(small, small.size(), 1);
    checkPattern(large, large.size(), 2);
  });
}

void test_shm_unexpected(void**) { unexpected(withProvider("shm")); }
void test_tcp_unexpected(void**) { unexpected(withProvider("tcp")); }
void test_rxm_unexpected(void**) { unexpected(withProvider("tcp;ofi_rxm")); }

// Tags that differ only in the top bit (or only in the bottom one) stay apart
// when received in the opposite order; one tag keeps its messages in order.
void tagsAndOrder(const Options& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    const uint64_t tags[] = {0x8000000000000001ULL, 0x0000000000000001ULL, ~0ULL, ~0ULL - 1};
    const size_t sizes[] = {3000, 70000, 5, 300000};
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<Request> requests(4 + 8);
    if (self.rank == 0) {
      for (int i = 0; i < 4; ++i) {
        buffers.push_back(pattern(sizes[i], i));
        self.transport->send(1, tags[i], buffers[i].data(), sizes[i], requests[i]);
      }
      for (int i = 0; i < 8; ++i) {
        buffers.push_back(pattern(1000 * i + 17, 100 + i));
        self.transport->send(1, 0x5A5A, buffers.back().data(), buffers.back().size(), requests[4 + i]);
      }
    } else {
      for (int i = 3; i >= 0; --i) {
        buffers.emplace_back(sizes[i]);
        self.transport->recv(0, tags[i], buffers.back().data(), sizes[i], requests[i]);
      }
      std::reverse(buffers.begin(), buffers.end());
      for (int i = 0; i < 8; ++i) {
        buffers.emplace_back(1000 * i + 17);
        self.transport->recv(0, 0x5A5A, buffers.back().data(), buffers.back().size(), requests[4 + i]);
      }
    }
    for (Request& request : requests) waitOk(*self.transport, request);
    if (self.rank == 1) {
      for (int i = 0; i < 4; ++i) checkPattern(buffers[i], sizes[i], i);
      for (int i = 0; i < 8; ++i) checkPattern(buffers[4 + i], 1000 * i + 17, 100 + i);
    }
  });
}

void test_shm_tags_and_order(void**) { tagsAndOrder(withProvider("shm")); }
void test_tcp_tags_and_order(void**) { tagsAndOrder(withProvider("tcp")); }
void test_rxm_tags_and_order(void**) { tagsAndOrder(withProvider("tcp;ofi_rxm")); }
// 4 KiB chunks: every message but the smallest spans chunks of one tag.
void test_shm_tags_and_order_chunked(void**) { tagsAndOrder(withProvider("shm", 4096)); }

// A receive of the wrong size fails with COMM_ERR_MISMATCH naming both sizes,
// whether the message is shorter or longer, in one piece or several; the
// transport stays usable afterwards. tcp;ofi_rxm (1.17) receiving straight
// into user buffers drops the connection when a message is too long, so
// there only one longer case runs, last.
void mismatch(const Options& options, bool survivesLonger, bool bounceBuffers = false) {
  runRanks(2, [&](Rank& self) {
    if (bounceBuffers) setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 1);
    self.connect(options);
    struct Case {
      size_t sent, expected;
      const char* says;
    };
    const Case cases[] = {
        {1000, 2000, "is 1000 bytes, expected 2000"}, {4096, 8192, "is 4096 bytes, expected 8192"},
        {3000, 2000, "bytes, expected 2000"},         {8192 + 100, 4096, "bytes, expected 4096"},
        {300000, 200000, "bytes, expected 200000"},   {10000, 0, "bytes, expected 0"},
    };
    const size_t count = survivesLonger ? std::size(cases) : 3;
    uint64_t tag = 0x700;
    for (size_t i = 0; i < count; ++i) {
      const Case& c = cases[i];
      ++tag;
      std::vector<uint8_t> buffer = pattern(std::max(c.sent, c.expected), 3);
      Request request;
      if (self.rank == 0) {
        self.transport->send(1, tag, buffer.data(), c.sent, request);
        waitOk(*self.transport, request);
      } else {
        self.transport->recv(0, tag, buffer.data(), c.expected, request);
        waitFor(*self.transport, request);
        CHECK(request.status == COMM_ERR_MISMATCH, "sent {} expected {}: status {} ({})", c.sent, c.expected,
              static_cast<int>(request.status), request.error);
        CHECK(request.error.find(c.says) != std::string::npos && request.error.find("from rank 0") != std::string::npos,
              "message \"{}\" lacks \"{}\"", request.error, c.says);
      }
      self.barrier();
    }
    if (!survivesLonger) return;
    std::vector<uint8_t> data = pattern(5000, 9);
    Request after;
    if (self.rank == 0) {
      self.transport->send(1, 0x800, data.data(), data.size(), after);
    } else {
      std::fill(data.begin(), data.end(), 0);
      self.transport->recv(0, 0x800, data.data(), data.size(), after);
    }
    waitOk(*self.transport, after);
    checkPattern(data, data.size(), 9);
  });
}

void test_shm_mismatch(void**) { mismatch(withProvider("shm", 4096), true); }
void test_tcp_mismatch(void**) { mismatch(withProvider("tcp"), true); }
void test_rxm_mismatch(void**) { mismatch(withProvider("tcp;ofi_rxm", 4096), false); }
// With rxm's bounce buffers a long message is truncated without harm.
void test_rxm_mismatch_bounce_buffers(void**) { mismatch(withProvider("tcp;ofi_rxm", 4096), true, true); }

// A cancelled receive is done with COMM_ERR_ABORTED and its buffer is left alone;
// the transport keeps working.
void cancelReceive(const Options& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    std::vector<uint8_t> buffer(3 * 4096 + 5, 0xEE);
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
    std::vector<uint8_t> out = pattern(buffer.size(), self.rank);
    Request sent, received;
    self.transport->recv(self.peer(), 0xDEAD, buffer.data(), buffer.size(), received);
    self.transport->send(self.peer(), 0xDEAD, out.data(), out.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(buffer, buffer.size(), self.peer());
  });
}

void test_shm_cancel(void**) { cancelReceive(withProvider("shm", 4096)); }
void test_tcp_cancel(void**) { cancelReceive(withProvider("tcp", 4096)); }
void test_rxm_cancel(void**) { cancelReceive(withProvider("tcp;ofi_rxm", 4096)); }

// More than 2 GiB in one message (three 1 GiB-bounded chunks), checked by sampling.
void test_shm_over_2GiB(void**) {
  const size_t size = (size_t{2} << 30) + 4096;
  runRanks(2, [&](Rank& self) {
    self.connect(withProvider("shm"));
    // Untouched anonymous pages read as zero: only the sampled bytes get written.
    void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mapping != MAP_FAILED, "mmap of {} bytes", size);
    auto* data = static_cast<uint8_t*>(mapping);
    auto sample = [&](size_t k) { return std::min(size - 1, k * kMiB + (k * 7919) % kMiB); };
    const size_t samples = size / kMiB + 1;
    for (size_t k = 0; k < samples; ++k) data[sample(k)] = self.rank == 0 ? patternByte(k, 5) | 1 : 0;
    Request request;
    if (self.rank == 0) {
      self.transport->send(1, 42, data, size, request);
    } else {
      self.transport->recv(0, 42, data, size, request);
    }
    waitOk(*self.transport, request);
    if (self.rank == 1) {
      CHECK(request.bytes == size, "received {} of {} bytes", request.bytes, size);
      for (size_t k = 0; k < samples; ++k) {
        CHECK(data[sample(k)] == (patternByte(k, 5) | 1), "sample {} at byte {}", k, sample(k));
      }
    }
    munmap(mapping, size);
  });
}

// Every rank sends a distinct message to every rank, itself included, with
// no provider forced: peers on the node go over shm, others over tcp;ofi_rxm.
void allToAll(const Options& options, bool sameNode) {
  runRanks(4, [&](Rank& self) {
    self.connect(options, sameNode);
    const char* expected = sameNode ? "shm" : "tcp;ofi_rxm";
    CHECK(self.transport->providerFor(self.peer()) == expected, "peer over {}, expected {}",
          self.transport->providerFor(self.peer()), expected);
    auto sizeFrom = [](int from, int to) { return 100000 + 4096 * from + to; };
    std::vector<std::vector<uint8_t>> out, in;
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

void test_auto_all_to_all_local(void**) { allToAll(withProvider(""), true); }
// Peers pretend to be on other nodes (each rank reaches itself over shm).
void test_auto_all_to_all_remote(void**) { allToAll(withProvider(""), false); }

// Far more operations than the provider queues hold (shm: 1024), posted
// without progress in between: the overflow waits in the transport's backlog
// and still matches in order.
void manyOutstanding(const Options& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    constexpr int kMessages = 3000;
    auto sizeOf = [](int i) { return static_cast<size_t>(i % 7 == 0 ? 20000 : 8 + i % 61); };
    std::vector<std::vector<uint8_t>> buffers;
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

void test_shm_many_outstanding(void**) { manyOutstanding(withProvider("shm")); }
void test_tcp_many_outstanding(void**) { manyOutstanding(withProvider("tcp")); }
void test_rxm_many_outstanding(void**) { manyOutstanding(withProvider("tcp;ofi_rxm")); }

// Without shm (FI_PROVIDER=^shm excludes it) peers on the node use tcp.
void test_auto_without_shm(void**) {
  runRanks(2, [&](Rank& self) {
    setenv("FI_PROVIDER", "^shm", 1);
    self.connect(withProvider(""));
    CHECK(self.transport->providerFor(self.peer()) == "tcp;ofi_rxm", "peer over {}",
          self.transport->providerFor(self.peer()));
    std::vector<uint8_t> out = pattern(kMiB, self.rank);
    std::vector<uint8_t> in(kMiB);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, out.data(), out.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

// Two threads per rank exchange messages on their own tags at once, both
// driving progress: a request completes whichever thread reaps it.
void threads(const Options& options) {
  runRanks(2, [&](Rank& self) {
    self.connect(options);
    constexpr int kThreads = 2;
    std::exception_ptr failures[kThreads];
    auto worker = [&](int thread) {
      try {
        for (int i = 0; i < 200; ++i) {
          size_t size = 1 + (i * 997) % 70000;
          uint64_t tag = uint64_t(thread) << 32 | i;
          std::vector<uint8_t> out = pattern(size, self.rank * 1000 + thread + i);
          std::vector<uint8_t> in(size);
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

void test_shm_threads(void**) { threads(withProvider("shm")); }
void test_tcp_threads(void**) { threads(withProvider("tcp")); }
void test_rxm_threads(void**) { threads(withProvider("tcp;ofi_rxm")); }

// A peer that exits fails what waits on it, naming it; messages that had
// arrived whole are still received.
void test_tcp_peer_exit(void**) {
  runRanks(2, [&](Rank& self) {
    self.connect(withProvider("tcp"));
    std::vector<uint8_t> small = pattern(100, 5);
    if (self.rank == 1) {
      Request sent;
      self.transport->send(0, 1, small.data(), small.size(), sent);
      waitOk(*self.transport, sent);
      self.barrier();
      std::fflush(nullptr);
      _exit(0);  // no goodbye: the connection just closes
    }
    self.barrier();
    std::vector<uint8_t> large(2 * kMiB);
    Request pending, arrived;
    self.transport->recv(1, 2, large.data(), large.size(), pending);
    waitFor(*self.transport, pending);
    CHECK(pending.status == COMM_ERR_REMOTE && pending.error.find("rank 1") != std::string::npos, "status {} ({})",
          static_cast<int>(pending.status), pending.error);
    std::fill(small.begin(), small.end(), 0);
    self.transport->recv(1, 1, small.data(), small.size(), arrived);
    waitOk(*self.transport, arrived);
    checkPattern(small, small.size(), 5);
    Request late;
    self.transport->send(1, 3, small.data(), small.size(), late);
    waitFor(*self.transport, late);
    CHECK(late.status == COMM_ERR_REMOTE, "a send to the gone rank: status {}", static_cast<int>(late.status));
    std::fflush(nullptr);
    _exit(0);  // the harness's closing barrier would wait for rank 1
  });
}

void test_auto_routes(void**) {
  runRanks(2, [&](Rank& self) {
    Options options = withProvider("");
    self.transport = comm::transport::createOfiTransport(options);
    // Rank 1 is on this node, rank 0 pretends the other is not.
    std::vector<bool> sameNode = {true, true};
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress(), sameNode);
    peers[self.peer()].sameNode = false;
    self.transport->connect(self.rank, peers);
    CHECK(self.transport->providerFor(self.rank) == "shm", "self over {}", self.transport->providerFor(self.rank));
    CHECK(self.transport->providerFor(self.peer()) == "tcp;ofi_rxm", "peer over {}",
          self.transport->providerFor(self.peer()));
  });
}

// Off a single node tcp;ofi_rxm binds to the interface the tcp_iface setting
// (COMM_TCP_IFACE) names.
void test_rxm_interface(void**) {
  runRanks(2, [&](Rank& self) {
    unsetenv("FI_TCP_IFACE");
    Options options = withProvider("tcp;ofi_rxm");
    options.singleNode = false;
    options.tcpInterface = "lo";
    self.transport = comm::transport::createOfiTransport(options);
    std::vector<uint8_t> blob = self.transport->localAddress();
    std::vector<comm::transport::EndpointAddress> endpoints = comm::transport::decodeAddresses(blob, self.rank);
    CHECK(endpoints.size() == 1 && endpoints[0].provider == "tcp;ofi_rxm", "{} endpoints", endpoints.size());
    sockaddr_in address{};
    CHECK(endpoints[0].name.size() == sizeof address, "address of {} bytes", endpoints[0].name.size());
    std::memcpy(&address, endpoints[0].name.data(), sizeof address);
    CHECK(address.sin_family == AF_INET && ntohl(address.sin_addr.s_addr) == INADDR_LOOPBACK,
          "bound to family {} address {:#x}", address.sin_family, ntohl(address.sin_addr.s_addr));
    self.transport->connect(self.rank, self.exchange(blob, {true, true}));
    std::vector<uint8_t> out = pattern(1000, self.rank);
    std::vector<uint8_t> in(1000);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, out.data(), out.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

// FI_PROVIDER forces one provider when Options does not name one.
void test_fi_provider_environment(void**) {
  runRanks(2, [&](Rank& self) {
    setenv("FI_PROVIDER", "shm", 1);
    self.connect(withProvider(""), false);
    CHECK(self.transport->providerFor(self.peer()) == "shm", "peer over {}", self.transport->providerFor(self.peer()));
    std::vector<uint8_t> data = pattern(100, self.rank);
    std::vector<uint8_t> in(100);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, data.data(), data.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

template <typename Call>
void expectError(comm_status_t status, const char* says, Call&& call) {
  try {
    call();
  } catch (const comm::Error& error) {
    CHECK(error.status() == status, "status {} ({})", static_cast<int>(error.status()), error.what());
    CHECK(std::string(error.what()).find(says) != std::string::npos, "message \"{}\" lacks \"{}\"", error.what(), says);
    return;
  }
  CHECK(false, "no error; expected one saying \"{}\"", says);
}

// Errors that name their cause: unknown provider, a peer without the forced
// provider, a malformed address, a rank out of range.
void test_setup_errors(void**) {
  runRanks(1, [&](Rank&) {
    expectError(COMM_ERR_TRANSPORT, "no-such-provider",
                [] { comm::transport::createOfiTransport(withProvider("no-such-provider")); });
    auto shm = comm::transport::createOfiTransport(withProvider("shm"));
    auto tcp = comm::transport::createOfiTransport(withProvider("tcp"));
    expectError(COMM_ERR_TRANSPORT, "rank 1 offers shm", [&] {
      tcp->connect(0, {{tcp->localAddress(), true}, {shm->localAddress(), true}});
    });
    expectError(COMM_ERR_TRANSPORT, "rank 1's address", [&] {
      shm->connect(0, {{shm->localAddress(), true}, {{1, 9, 9}, true}});
    });
    shm->connect(0, {{shm->localAddress(), true}});
    Request request;
    uint8_t byte = 0;
    expectError(COMM_ERR_INVALID_ARGUMENT, "rank 3", [&] { shm->send(3, 0, &byte, 1, request); });
  });
}

// Off a single node comm's tcp listens on the interface the tcp_iface setting
// names, and says so when there is no such interface.
void test_tcp_interface(void**) {
  runRanks(1, [&](Rank&) {
    Options options = withProvider("tcp");
    options.singleNode = false;
    options.tcpInterface = "lo";
    auto transport = comm::transport::createTcpTransport(options);
    std::vector<uint8_t> blob = transport->localAddress();
    sockaddr_in address{};
    CHECK(blob.size() == sizeof address, "address of {} bytes", blob.size());
    std::memcpy(&address, blob.data(), sizeof address);
    CHECK(address.sin_family == AF_INET && ntohl(address.sin_addr.s_addr) == INADDR_LOOPBACK && address.sin_port != 0,
          "listening on family {} address {:#x} port {}", address.sin_family, ntohl(address.sin_addr.s_addr),
          ntohs(address.sin_port));
    options.tcpInterface = "no-such-interface0";
    expectError(COMM_ERR_TRANSPORT, "no-such-interface0", [&] { comm::transport::createTcpTransport(options); });
  });
}

// A process without the job's secret: connects to the tcp transport at
// `address` (a localAddress() blob), sends `bytes` and then stays silent
// until the connection is closed.
comm::UniqueFd strangerConnection(const std::vector<uint8_t>& address, const std::string& bytes) {
  sockaddr_in to{};
  CHECK(address.size() == sizeof to, "address of {} bytes", address.size());
  std::memcpy(&to, address.data(), sizeof to);
  comm::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  CHECK(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0, "connect: {}", errno);
  CHECK(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()), "send");
  return fd;
}

// Strangers that reach rank 0's listener before rank 1 does (garbage, an
// introduction that claims to be rank 1, silence) are turned away: rank 1
// still connects, and what it sends arrives intact.
void test_tcp_strangers_first(void**) {
  runRanks(2, [&](Rank& self) {
    self.transport = comm::transport::createNetworkTransport(withProvider("tcp"));
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress(), {true, true});
    std::vector<comm::UniqueFd> strangers;
    if (self.rank == 1) {
      const uint64_t claimRankOne[2] = {0x31706374'6d6d6f63, 1};  // comm's first tcp introduction
      strangers.push_back(strangerConnection(peers[0].address, std::string(16, 'x')));
      strangers.push_back(
          strangerConnection(peers[0].address, std::string(reinterpret_cast<const char*>(claimRankOne), 16)));
      strangers.push_back(strangerConnection(peers[0].address, ""));
    }
    self.barrier();
    self.transport->connect(self.rank, peers);
    std::vector<uint8_t> data = pattern(5000, 7);
    Request request;
    if (self.rank == 1) {
      self.transport->send(0, 3, data.data(), data.size(), request);
    } else {
      std::fill(data.begin(), data.end(), 0);
      self.transport->recv(1, 3, data.data(), data.size(), request);
    }
    waitOk(*self.transport, request);
    checkPattern(data, data.size(), 7);
  });
}

// A rank that cannot prove the job's secret is not connected: it learns the
// peer refused it, and the peer, waiting for a rank that never proves it,
// times out naming how many are missing.
void test_tcp_wrong_secret_refused(void**) {
  runRanks(2, [&](Rank& self) {
    Options options = withProvider("tcp");
    options.connectTimeout = 3s;
    if (self.rank == 1) options.secret = "not the job's secret 0123456789";
    self.transport = comm::transport::createNetworkTransport(options);
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress(), {true, true});
    if (self.rank == 1) {
      expectError(COMM_ERR_TRANSPORT, "refused this process's job secret",
                  [&] { self.transport->connect(self.rank, peers); });
    } else {
      expectError(COMM_ERR_TIMEOUT, "1 higher rank(s) did not connect",
                  [&] { self.transport->connect(self.rank, peers); });
    }
    self.transport.reset();
  });
}

// A peer that proved the job's secret (a rank gone wrong) and then sends
// what it likes: connects to the tcp transport at `address` as rank 1.
class LyingPeer {
 public:
  LyingPeer(const std::vector<uint8_t>& address, const std::string& secret) : fd_(strangerConnection(address, "")) {
    comm::Handshake handshake = comm::Handshake::connecting(secret, "comm tcp", 1);
    comm::runHandshake(fd_.get(), handshake, Deadline(kPatience), COMM_ERR_TRANSPORT, "lying peer");
  }
  // A message header as comm's tcp transport frames it (tcp_wire.h).
  void header(uint64_t tag, uint64_t size, uint32_t kind, uint32_t id = 0) {
    const uint64_t words[4] = {tag, size, uint64_t{kind} | uint64_t{id} << 32, 0};
    send(std::string(reinterpret_cast<const char*>(words), sizeof words));
  }
  void send(const std::string& bytes) {
    CHECK(::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()), "send");
  }

 private:
  comm::UniqueFd fd_;
};

constexpr uint32_t kEagerKind = 0;
constexpr uint32_t kReadyToSendKind = 1;

// Rank 0 of two, with `lie` (run once the lying peer is connected as rank
// 1) telling it things; returns its transport.
std::unique_ptr<Transport> meetLyingPeer(Options options, const std::function<void(LyingPeer&)>& lie) {
  auto transport = comm::transport::createNetworkTransport(options);
  std::vector<PeerInfo> peers(2);
  peers[0] = {transport->localAddress(), true};
  peers[1] = {std::vector<uint8_t>(sizeof(sockaddr_in), 0), true};
  std::unique_ptr<LyingPeer> peer;
  std::thread connecting([&] { peer = std::make_unique<LyingPeer>(peers[0].address, options.secret); });
  transport->connect(0, peers);
  connecting.join();
  lie(*peer);
  // The peer stays connected while rank 0 reads what it said.
  static std::vector<std::unique_ptr<LyingPeer>> kept;
  kept.push_back(std::move(peer));
  return transport;
}

// Waits for `request` and checks it failed with `status` saying `says`.
void expectFailure(Transport& transport, const Request& request, comm_status_t status, const char* says) {
  waitFor(transport, request);
  CHECK(request.status == status, "status {}: {}", static_cast<int>(request.status), request.error);
  CHECK(request.error.find(says) != std::string::npos, "error \"{}\" lacks \"{}\"", request.error, says);
}

// comm's tcp never believes a size a peer announces: a header claiming
// 2^62 or 4 GiB bytes, or more early messages than the unexpected-message
// limit, fail the peer's connection (COMM_ERR_TRANSPORT naming it) instead
// of asking for that memory; a message larger than its receive fails that
// receive (COMM_ERR_MISMATCH) and the connection goes on.
void test_tcp_lying_sizes(void**) {
  runRanks(1, [&](Rank&) {
    Options options = withProvider("tcp");
    options.singleNode = true;
    for (uint64_t claim : {uint64_t{1} << 62, uint64_t{4} << 30}) {
      auto transport = meetLyingPeer(options, [&](LyingPeer& peer) { peer.header(5, claim, kEagerKind); });
      std::vector<uint8_t> buffer(16);
      Request request;
      transport->recv(1, 6, buffer.data(), buffer.size(), request);
      expectFailure(*transport, request, COMM_ERR_TRANSPORT, "rank 1");
    }
    options.maxUnexpectedBytes = 1 << 20;
    auto flooded = meetLyingPeer(options, [&](LyingPeer& peer) {
      for (int i = 0; i < 20; ++i) {
        peer.header(7, 64 * 1024, kEagerKind);
        peer.send(std::string(64 * 1024, 'x'));
      }
    });
    std::vector<uint8_t> buffer(16);
    Request request;
    flooded->recv(1, 8, buffer.data(), buffer.size(), request);
    expectFailure(*flooded, request, COMM_ERR_TRANSPORT, "rank 1");

    auto larger = meetLyingPeer(options, [&](LyingPeer& peer) {
      peer.header(9, uint64_t{1} << 62, kReadyToSendKind, 0);
      peer.header(10, 2048, kEagerKind);
      peer.send(std::string(2048, 'y'));
      peer.header(11, 4, kEagerKind);
      peer.send("good");
    });
    Request announced, eager, good;
    std::vector<uint8_t> small(1024);
    larger->recv(1, 9, small.data(), small.size(), announced);
    expectFailure(*larger, announced, COMM_ERR_MISMATCH, "rank 1");
    larger->recv(1, 10, small.data(), small.size(), eager);
    expectFailure(*larger, eager, COMM_ERR_MISMATCH, "rank 1");
    larger->recv(1, 11, small.data(), 4, good);
    waitOk(*larger, good);
    CHECK(std::memcmp(small.data(), "good", 4) == 0, "the message after the mismatches arrived wrong");
  });
}

}  // namespace

// An optional argument selects tests by name pattern ("test_tcp_*").
int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_errors),
      cmocka_unit_test(test_tcp_strangers_first),
      cmocka_unit_test(test_tcp_wrong_secret_refused),
      cmocka_unit_test(test_tcp_lying_sizes),
      cmocka_unit_test(test_shm_sizes),
      cmocka_unit_test(test_tcp_sizes),
      cmocka_unit_test(test_rxm_sizes),
      cmocka_unit_test(test_rxm_sizes_chunked),
      cmocka_unit_test(test_shm_unexpected),
      cmocka_unit_test(test_tcp_unexpected),
      cmocka_unit_test(test_rxm_unexpected),
      cmocka_unit_test(test_shm_tags_and_order),
      cmocka_unit_test(test_tcp_tags_and_order),
      cmocka_unit_test(test_rxm_tags_and_order),
      cmocka_unit_test(test_shm_tags_and_order_chunked),
      cmocka_unit_test(test_shm_mismatch),
      cmocka_unit_test(test_tcp_mismatch),
      cmocka_unit_test(test_rxm_mismatch),
      cmocka_unit_test(test_rxm_mismatch_bounce_buffers),
      cmocka_unit_test(test_shm_cancel),
      cmocka_unit_test(test_tcp_cancel),
      cmocka_unit_test(test_rxm_cancel),
      cmocka_unit_test(test_auto_all_to_all_local),
      cmocka_unit_test(test_auto_all_to_all_remote),
      cmocka_unit_test(test_shm_many_outstanding),
      cmocka_unit_test(test_tcp_many_outstanding),
      cmocka_unit_test(test_rxm_many_outstanding),
      cmocka_unit_test(test_auto_without_shm),
      cmocka_unit_test(test_shm_threads),
      cmocka_unit_test(test_tcp_threads),
      cmocka_unit_test(test_tcp_peer_exit),
      cmocka_unit_test(test_rxm_threads),
      cmocka_unit_test(test_auto_routes),
      cmocka_unit_test(test_fi_provider_environment),
      cmocka_unit_test(test_rxm_interface),
      cmocka_unit_test(test_tcp_interface),
      cmocka_unit_test(test_shm_over_2GiB),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
