// What every transport promises (transport/transport.h), checked the same way
// over every path a world can use: comm's direct shared memory (Cross-Memory
// Attach and streamed copies), comm's tcp, libfabric's shm and libfabric's
// tcp;ofi_rxm (whole and cut into chunks). Each path is a row of the table
// of transports (transport/hybrid_transport.h) under some settings, and every
// row whose ranks are processes has one (rows_covered checks it; the threads
// row has threads_transport_test). Each (case, path) pair is a CTest test of
// its own, named CASE.PATH, found by --list; what only one transport does is
// tested in its own file (shm_transport_test, ofi_transport_test).
//
//   transport_conformance_test [CASE.PATH pattern]   # e.g. "mismatch.*"
//   transport_conformance_test --list                # every case, a line each
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/deadline.h"
#include "common/error.h"
#include "transport/hybrid_transport.h"
#include "transport/shm/channel.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"

#include "forked_ranks.h"
#include "transport_test_support.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace transport_test;

using comm::transport::kShmDirectProvider;
using comm::transport::kTcpProvider;
using comm::transport::Options;
using comm::transport::Request;
using comm::transport::ShmMode;

// The direct path's eager limit at 2 to 4 ranks: sizes on either side of it
// take its two protocols.
constexpr size_t kSlot = comm::transport::shmSlotPayload(comm::transport::shmSlotBytes(2));
constexpr size_t kChunk = 64 * 1024 + 1;

struct Path {
  const char* name;
  const char* row;  // in the table of transports
  Options options;
  // libfabric's shm (1.17) does not always complete the send of a message
  // the receiver truncated: comm's wait deadline ends it (COMM_ERR_TIMEOUT),
  // and longer messages are not sent here.
  bool truncatedSendsHang = false;

  std::unique_ptr<Transport> make() const { return comm::transport::createTransportOfRow(row, options); }
  // Messages larger than this travel as pieces the receiver cannot tell
  // from later messages of their tag: after a longer one, its remaining
  // pieces would meet the next receive of that tag, and after a shorter one
  // the receive's unused pieces may meet the next message (transport.h).
  // 0: messages are never cut.
  size_t chunkBytes() const { return options.ofi.maxChunkBytes; }
};

Options direct(ShmMode mode) {
  Options options;
  options.shm.mode = mode;
  return options;
}

Options network(const char* provider, size_t maxChunkBytes = 0) {
  Options options;
  options.provider = provider;
  options.singleNode = true;
  options.ofi.maxChunkBytes = maxChunkBytes;
  options.secret = "conformance test secret 0123456789";
  return options;
}

const Path kPaths[] = {
    {"direct", kShmDirectProvider, direct(ShmMode::kAttach)},
    {"direct_copy", kShmDirectProvider, direct(ShmMode::kCopy)},
    {"tcp", kTcpProvider, network(kTcpProvider)},
    {"ofi_shm", "ofi", network("shm"), true},
    {"rxm", "ofi", network("tcp;ofi_rxm")},
    // Chunks of 64 KiB + 1: most messages below span chunks of one tag.
    {"rxm_chunked", "ofi", network("tcp;ofi_rxm", kChunk)},
};

void runRanks(int size, const Body& body) { assert_int_equal(forkRanks(size, body), 0); }

// Both ranks send to each other at once, then to themselves, every size
// around the direct path's slot and beyond; then one way only, each
// direction in turn. Data verified.
void sizes(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
    const size_t sizes[] = {0, 1, 8, kSlot - 1, kSlot, kSlot + 1, 3 * kSlot + 5, kMiB + 3, 64 * kMiB};
    for (int to : {self.peer(), self.rank}) {
      for (size_t size : sizes) {
        Bytes out = pattern(size, self.rank + size);
        Bytes in(size, 0);
        Request sent, received;
        uint64_t tag = 0x1000 + size;
        self.transport->recv(to, tag, in.data(), size, received);
        self.transport->send(to, tag, out.data(), size, sent);
        waitOk(*self.transport, sent);
        waitOk(*self.transport, received);
        CHECK(received.bytes == size, "received {} bytes of {} from rank {}", received.bytes, size, to);
        checkPattern(in, size, to + size);
      }
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

// Sends land before their receives are posted, and the receives come in the
// opposite order.
void unexpected(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
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

// Tags that differ only in the top bit (or the bottom one) stay apart when
// received in the opposite order; one tag keeps its messages in order, small
// and large mixed, whether the receives come before or after the sends.
void tagsAndOrder(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
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

// A receive of the wrong size fails with COMM_ERR_MISMATCH naming the peer,
// the tag and both sizes (or that the message is longer), shorter or longer, small or large, posted before or
// after the message, in both directions; the sender completes and the pair
// keeps working.
void mismatch(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
    const std::pair<size_t, size_t> cases[] = {
        {1000, 2000},     {2000, 1000},     {kSlot, kSlot + 1}, {kSlot + 1, kSlot},
        {3 * kMiB, kMiB}, {kMiB, 3 * kMiB}, {10000, 0},         {0, 10},
    };
    uint64_t tag = 0x700;
    for (int sender = 0; sender < 2; ++sender) {
      for (bool postedFirst : {true, false}) {
        for (auto [sent, expected] : cases) {
          ++tag;
          if (path.truncatedSendsHang && sent > expected) continue;
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
            // A transport that only sees the receive overflow may not know the
            // longer message's size.
            std::string says =
                fmt::format("from rank {} with tag {:#x} is {} bytes, expected {}", self.peer(), tag, sent, expected);
            std::string longer = fmt::format("from rank {} with tag {:#x} is longer than the {} bytes expected",
                                             self.peer(), tag, expected);
            CHECK(request.error.find(says) != std::string::npos ||
                      (sent > expected && request.error.find(longer) != std::string::npos),
                  "message \"{}\" lacks \"{}\"", request.error, says);
          }
          // The next messages of the same pair and tag arrive intact.
          const bool cut = path.chunkBytes() != 0 && std::max(sent, expected) > path.chunkBytes();
          const uint64_t nextTag = cut ? tag | 1ULL << 40 : tag;
          for (size_t size : {size_t{5000}, 2 * kSlot}) {
            Bytes data = self.rank == sender ? pattern(size, tag) : Bytes(size, 0);
            Request after;
            if (self.rank == sender) {
              self.transport->send(self.peer(), nextTag, data.data(), size, after);
            } else {
              self.transport->recv(self.peer(), nextTag, data.data(), size, after);
            }
            waitOk(*self.transport, after);
            if (self.rank != sender) checkPattern(data, size, tag);
          }
        }
      }
    }
  });
}

// A cancelled receive is done with COMM_ERR_ABORTED and its buffer is left
// alone; a message sent afterwards goes to the next receive of its tag.
void cancel(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
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

// Every rank sends a distinct message, small or large, to every rank, itself
// included.
void allToAll(const Path& path) {
  runRanks(4, [&](Rank& self) {
    self.connect(path.make());
    exchangeWithEveryone(self, [](int from, int to) -> size_t {
      return (from + to) % 2 == 0 ? 100 + 10 * from + to : 200000 + 4096 * from + to;
    });
  });
}

// Far more messages than any queue or ring holds, posted without progress in
// between: the overflow waits in the transport's backlog and still matches
// in order.
void manyOutstanding(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
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
void threads(const Path& path) {
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
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

// More than 2 GiB in one message, checked by sampling (untouched anonymous
// pages read as zero: only the sampled bytes get written). Slow when the
// cores are shared, which kPatience allows for.
void over2GiB(const Path& path) {
  const size_t size = (size_t{2} << 30) + 4096 + 3;
  runRanks(2, [&](Rank& self) {
    self.connect(path.make());
    void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mapping != MAP_FAILED, "mmap of {} bytes", size);
    // The receiver writes every page: huge pages spare it half a million
    // page faults (advice only; where it is refused the test runs as before).
    if (self.rank == 1) madvise(mapping, size, MADV_HUGEPAGE);
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

struct Case {
  const char* name;
  void (*run)(const Path&);
};

const Case kCases[] = {
    {"sizes", sizes},        {"unexpected", unexpected}, {"tags_and_order", tagsAndOrder},      {"mismatch", mismatch},
    {"cancel", cancel},      {"all_to_all", allToAll},   {"many_outstanding", manyOutstanding}, {"threads", threads},
    {"over_2GiB", over2GiB},
};

// Every row of the table whose ranks are processes has a path here, so a
// transport added to the table is not left out.
void rowsCovered() {
  for (const comm::transport::TransportRow& row : comm::transport::transportRows()) {
    if (row.ranksAreThreads) continue;
    const bool covered =
        std::any_of(std::begin(kPaths), std::end(kPaths), [&](const Path& p) { return row.name == p.row; });
    if (!covered) fail_msg("the transport '%s' of the table has no path in kPaths", row.name.c_str());
  }
}

struct Registered {
  std::string name;
  std::function<void()> run;
};

std::vector<Registered> registered() {
  std::vector<Registered> all{{"rows_covered", rowsCovered}};
  for (const Case& test : kCases) {
    for (const Path& path : kPaths) {
      all.push_back({fmt::format("{}.{}", test.name, path.name), [&test, &path] { test.run(path); }});
    }
  }
  return all;
}

void runRegistered(void** state) { static_cast<const Registered*>(*state)->run(); }

}  // namespace

int main(int argc, char** argv) {
  std::vector<Registered> entries = registered();
  // CTest asks for the cases (tests/unit/CMakeLists.txt) and runs each alone.
  if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
    for (const Registered& entry : entries) std::printf("%s\n", entry.name.c_str());
    return 0;
  }
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  std::vector<CMUnitTest> tests;
  for (Registered& entry : entries) {
    tests.push_back({entry.name.c_str(), runRegistered, nullptr, nullptr, &entry});
  }
  return _cmocka_run_group_tests("transport_conformance", tests.data(), tests.size(), nullptr, nullptr);
}
