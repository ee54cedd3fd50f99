// What only the direct shared-memory transport does, between real processes
// (forked_ranks.h): its segments, a peer's death, cancelling a copy in flight,
// choosing Cross-Memory Attach, and the hybrid that routes peers to it. What
// every transport does is in transport_conformance_test.
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

#include "forked_ranks.h"
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

// Ranks connect their own direct transport, or (hybrid cases) the composite.
void connectDirect(Rank& self, const ShmOptions& options) {
  self.connect(comm::transport::createShmTransport(options));
}

void runRanks(int size, const Body& body, int killedRank = -1) {
  assert_int_equal(forkRanks(size, body, killedRank), 0);
}

ShmOptions mode(ShmMode m) { return ShmOptions{m}; }
const ShmOptions kAuto = mode(ShmMode::kAuto);
const ShmOptions kAttach = mode(ShmMode::kAttach);
const ShmOptions kCopy = mode(ShmMode::kCopy);

// After connect the peer is reached directly and every rank has mapped every
// segment: their names are gone from /dev/shm already.
void test_direct_and_unlinked(void**) {
  runRanks(2, [&](Rank& self) {
    connectDirect(self, kAuto);
    CHECK(self.transport->providerFor(self.peer()) == "shm-direct", "peer over {}",
          self.transport->providerFor(self.peer()));
    self.barrier();
    CHECK(segmentsOf(getpid()).empty(), "/dev/shm/{} still there after connect", segmentsOf(getpid())[0]);
  });
}

// A rank sends to itself through its own ring.
void test_self(void**) {
  runRanks(1, [&](Rank& self) {
    connectDirect(self, kAttach);
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
    connectDirect(self, options);
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

// A sender far ahead of its receiver: the receiver holds only
// maxUnexpectedBytes of early messages and then leaves the sender's ring
// unread, so the sender's later sends wait in its own queue (back-pressure)
// instead of the receiver's memory growing; once the receives are posted
// every message arrives, in order.
void test_early_messages_held_back(void**) {
  constexpr int kMessages = 200;
  const size_t size = kSlot / 2;
  ShmOptions options = kAuto;
  options.maxUnexpectedBytes = 8 * size;
  runRanks(2, [&](Rank& self) {
    connectDirect(self, options);
    std::vector<Bytes> data(kMessages);
    std::vector<Request> requests(kMessages);
    for (int i = 0; i < kMessages; ++i) data[i] = self.rank == 0 ? pattern(size, i) : Bytes(size, 0);
    if (self.rank == 0) {
      for (int i = 0; i < kMessages; ++i) self.transport->send(1, 4, data[i].data(), size, requests[i]);
    }
    self.pump(200ms);
    self.barrier();
    if (self.rank == 0) {
      const auto sent = std::count_if(requests.begin(), requests.end(), [](const Request& r) { return r.done.load(); });
      CHECK(sent > 0 && sent < kMessages / 2, "{} of {} early sends completed; the receiver holds {} bytes", sent,
            kMessages, options.maxUnexpectedBytes);
    }
    self.barrier();
    if (self.rank == 1) {
      for (int i = 0; i < kMessages; ++i) self.transport->recv(0, 4, data[i].data(), size, requests[i]);
    }
    for (Request& request : requests) waitOk(*self.transport, request);
    if (self.rank == 1) {
      for (int i = 0; i < kMessages; ++i) checkPattern(data[i], size, i);
    }
  });
}

// A receiver that leaves right after its last receive still tells the
// sender that it has read the message: that word, queued behind a ring the
// sender is not emptying, goes out in flush() before the transport closes,
// so the sender's send completes instead of waiting for a rank that is gone.
void test_flush_hands_over_owed_replies(void**) {
  constexpr int kEarly = 300;
  const size_t small = kSlot / 2;
  ShmOptions options = kAttach;
  // Rank 0 then leaves rank 1's ring unread (test_early_messages_held_back).
  options.maxUnexpectedBytes = 8 * small;
  runRanks(2, [&](Rank& self) {
    connectDirect(self, options);
    const int peer = self.peer();
    Bytes large = self.rank == 0 ? pattern(4 * kMiB, 3) : Bytes(4 * kMiB, 0);
    std::vector<Bytes> early(kEarly);
    std::vector<Request> earlyRequests(kEarly);
    Request largeRequest;
    if (self.rank == 0) {
      self.transport->send(peer, 1, large.data(), large.size(), largeRequest);
    } else {
      // More than rank 0 holds and its ring takes: that ring stays full.
      for (int i = 0; i < kEarly; ++i) {
        early[i] = pattern(small, i);
        self.transport->send(peer, 2, early[i].data(), small, earlyRequests[i]);
      }
    }
    self.pump(100ms);
    self.barrier();
    if (self.rank == 1) {
      self.transport->recv(peer, 1, large.data(), large.size(), largeRequest);
      waitOk(*self.transport, largeRequest);
      checkPattern(large, large.size(), 3);
      uint32_t delivered = 0;
      for (Request& request : earlyRequests) {
        if (request.done.load()) {
          ++delivered;
        } else {
          self.transport->cancel(request);
        }
      }
      CHECK(delivered < kEarly, "all {} early messages went into a ring that should have filled", kEarly);
      self.transport->flush(Deadline(kPatience));
      self.transport.reset();
      self.allGather(Bytes(reinterpret_cast<uint8_t*>(&delivered), reinterpret_cast<uint8_t*>(&delivered + 1)));
      return;
    }
    for (int i = 0; i < kEarly; ++i) {
      early[i] = Bytes(small, 0);
      self.transport->recv(peer, 2, early[i].data(), small, earlyRequests[i]);
    }
    waitOk(*self.transport, largeRequest);
    uint32_t delivered = 0;
    std::memcpy(&delivered, self.allGather({})[1].data(), sizeof delivered);
    for (uint32_t i = 0; i < delivered; ++i) {
      waitOk(*self.transport, earlyRequests[i]);
      checkPattern(early[i], small, i);
    }
    for (uint32_t i = delivered; i < kEarly; ++i) self.transport->cancel(earlyRequests[i]);
  });
}

// A peer that dies mid-conversation: progress() keeps returning promptly,
// a message it announced fails with COMM_ERR_REMOTE (Cross-Memory Attach) or
// can be cancelled (streamed), sends to it pile up without blocking, and the
// survivor cleans up.
void peerDeath(const ShmOptions& options) {
  runRanks(
      2,
      [&](Rank& self) {
        connectDirect(self, options);
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
    connectDirect(self, kAuto);
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
  runRanks(1, [&](Rank& self) { connectDirect(self, kAttach); });
  assert_int_equal(segmentsOf(waiter).size(), 0);
}

// The composite: peers on the node over the direct path unless it is off;
// the others over the provider's network transport, both at once.
void hybrid(const Options& ofiOptions, const ShmOptions& shm, bool sameNode, const char* expected) {
  Options options = ofiOptions;
  options.shm = shm;
  runRanks(2, [&](Rank& self) {
    self.transport = comm::transport::createTransport(options);
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
// A provider names the network transport only: peers on the node stay direct.
void test_hybrid_provider_keeps_direct(void**) { hybrid(fabric("tcp", true), kAuto, true, "shm-direct"); }
void test_hybrid_off(void**) { hybrid(fabric("", true), mode(ShmMode::kOff), true, "shm"); }
void test_hybrid_off_tcp(void**) { hybrid(fabric("tcp", true), mode(ShmMode::kOff), true, "tcp"); }
void test_hybrid_off_rxm(void**) { hybrid(fabric("tcp;ofi_rxm", true), mode(ShmMode::kOff), true, "tcp;ofi_rxm"); }
// The peer pretends to be on another node; each rank reaches itself
// directly. Between nodes comm's tcp is the default; libfabric serves what
// names it.
void test_hybrid_remote(void**) { hybrid(fabric("", false), kAuto, false, "tcp"); }
void test_hybrid_remote_rxm(void**) { hybrid(fabric("tcp;ofi_rxm", false), kAuto, false, "tcp;ofi_rxm"); }

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
      cmocka_unit_test(test_direct_and_unlinked),
      cmocka_unit_test(test_self),
      cmocka_unit_test(test_cancel_matched),
      cmocka_unit_test(test_cancel_matched_copy),
      cmocka_unit_test(test_early_messages_held_back),
      cmocka_unit_test(test_flush_hands_over_owed_replies),
      cmocka_unit_test(test_peer_death),
      cmocka_unit_test(test_peer_death_copy),
      cmocka_unit_test(test_auto_attaches_when_sharing_cpus),
      cmocka_unit_test(test_peer_death_at_connect),
      cmocka_unit_test(test_abandoned_segment_swept),
      cmocka_unit_test(test_hybrid_direct),
      cmocka_unit_test(test_hybrid_provider_keeps_direct),
      cmocka_unit_test(test_hybrid_off),
      cmocka_unit_test(test_hybrid_off_tcp),
      cmocka_unit_test(test_hybrid_off_rxm),
      cmocka_unit_test(test_hybrid_remote),
      cmocka_unit_test(test_hybrid_remote_rxm),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
