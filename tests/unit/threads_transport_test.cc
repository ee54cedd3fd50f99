// The in-process transport (transport/threads/): what transport.h promises,
// checked with ranks that are transports of this one process, driven from
// one thread (a send completes as it is posted) and from several. The
// conformance matrix (transport_conformance_test) forks its ranks, which
// this transport cannot join.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "transport/hybrid_transport.h"
#include "transport/threads/threads_transport.h"

#include "transport_test_support.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail.
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace transport_test;
using comm::transport::PeerInfo;
using comm::transport::Request;
using comm::transport::Transport;

// `size` ranks, connected; rank 0's through the hybrid's table (provider
// "threads"), the others made directly.
std::vector<std::unique_ptr<Transport>> connected(int size) {
  std::vector<std::unique_ptr<Transport>> ranks;
  comm::transport::Options options;
  options.provider = comm::transport::kThreadsProvider;
  ranks.push_back(comm::transport::createNetworkTransport(options));
  while (static_cast<int>(ranks.size()) < size) ranks.push_back(comm::transport::createThreadsTransport());
  std::vector<PeerInfo> peers;
  for (auto& rank : ranks) peers.push_back({rank->localAddress(), true});
  for (int rank = 0; rank < size; ++rank) ranks[rank]->connect(rank, peers);
  return ranks;
}

void run(void (*body)()) {
  try {
    body();
  } catch (const std::exception& error) {
    fail_msg("%s", error.what());
  }
}

// Every size, to a peer and to itself, the receive posted before the send
// and after it (held as a copy).
void sizesBothOrders() {
  auto ranks = connected(2);
  for (int to : {1, 0}) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{8}, size_t{4097}, kMiB + 3}) {
      for (bool receiveFirst : {true, false}) {
        Bytes out = pattern(size, size + to), in(size, 0);
        Request sent, received;
        if (receiveFirst) ranks[to]->recv(0, 0x10 + size, in.data(), size, received);
        ranks[0]->send(to, 0x10 + size, out.data(), size, sent);
        if (!receiveFirst) ranks[to]->recv(0, 0x10 + size, in.data(), size, received);
        waitOk(*ranks[0], sent);
        waitOk(*ranks[to], received);
        CHECK(received.bytes == size, "{} bytes of {}", received.bytes, size);
        checkPattern(in, size, size + to);
      }
    }
  }
}

// Tags match exactly (all 64 bits); one tag's messages meet its receives in
// posting order, whatever the other tags do.
void tagsAndOrder() {
  auto ranks = connected(2);
  const uint64_t tags[] = {1, uint64_t{1} << 63 | 1, 2};
  uint64_t sentValues[3][4], received[3][4] = {};
  Request sends[3][4], receives[3][4];
  for (int i = 0; i < 2; ++i) {
    for (int t = 0; t < 3; ++t) ranks[1]->recv(0, tags[t], &received[t][i], 8, receives[t][i]);
  }
  for (int i = 0; i < 4; ++i) {
    for (int t = 2; t >= 0; --t) {
      sentValues[t][i] = t * 100 + i;
      ranks[0]->send(1, tags[t], &sentValues[t][i], 8, sends[t][i]);
    }
  }
  for (int i = 2; i < 4; ++i) {
    for (int t = 0; t < 3; ++t) ranks[1]->recv(0, tags[t], &received[t][i], 8, receives[t][i]);
  }
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 4; ++i) {
      waitOk(*ranks[1], receives[t][i]);
      CHECK(received[t][i] == static_cast<uint64_t>(t * 100 + i), "tag {} message {}: {}", t, i, received[t][i]);
    }
  }
}

// A message whose size is not the receive's fails it, in the words every
// transport uses; the next message of the tag still meets the next receive.
void mismatch() {
  auto ranks = connected(2);
  char big[16] = "sixteen bytes..", small[4];
  Request sent, received, sentAgain, receivedAgain;
  ranks[1]->recv(0, 0x2a, small, sizeof small, received);
  ranks[0]->send(1, 0x2a, big, sizeof big, sent);
  waitFor(*ranks[1], received);
  CHECK(received.status == COMM_ERR_MISMATCH, "status {}", static_cast<int>(received.status));
  CHECK(received.error == "threads: message from rank 0 with tag 0x2a is 16 bytes, expected 4", "{}", received.error);
  ranks[0]->send(1, 0x2a, big, sizeof small, sentAgain);
  ranks[1]->recv(0, 0x2a, small, sizeof small, receivedAgain);
  waitOk(*ranks[1], receivedAgain);
  CHECK(std::string(small, 4) == "sixt", "{}", std::string(small, 4));
}

// A cancelled receive is done, aborted, and never written; the message
// then meets the next receive of its tag.
void cancel() {
  auto ranks = connected(2);
  uint64_t value = 7, untouched = 0, later = 0;
  Request received, sent, receivedLater;
  ranks[1]->recv(0, 5, &untouched, 8, received);
  ranks[1]->cancel(received);
  CHECK(received.done && received.status == COMM_ERR_ABORTED, "status {}", static_cast<int>(received.status));
  ranks[0]->send(1, 5, &value, 8, sent);
  ranks[1]->recv(0, 5, &later, 8, receivedLater);
  waitOk(*ranks[1], receivedLater);
  CHECK(untouched == 0 && later == 7, "{} {}", untouched, later);
  ranks[1]->cancel(receivedLater);  // done already: stays as it is
  CHECK(receivedLater.status == COMM_OK, "status {}", static_cast<int>(receivedLater.status));
}

// A rank that leaves fails the receives posted for it, after what it sent
// before it went has been taken; sends to it fail.
void peerLeaves() {
  auto ranks = connected(2);
  uint64_t value = 3, first = 0, waiting = 0;
  Request sent, receivedFirst, receivedWaiting, sentToGone;
  ranks[1]->recv(0, 9, &waiting, 8, receivedWaiting);
  ranks[0]->send(1, 8, &value, 8, sent);
  ranks[0].reset();
  CHECK(receivedWaiting.done && receivedWaiting.status == COMM_ERR_REMOTE, "status {}",
        static_cast<int>(receivedWaiting.status));
  ranks[1]->recv(0, 8, &first, 8, receivedFirst);
  waitOk(*ranks[1], receivedFirst);
  CHECK(first == 3, "{}", first);
  ranks[1]->send(0, 1, &value, 8, sentToGone);
  CHECK(sentToGone.status == COMM_ERR_REMOTE, "status {}", static_cast<int>(sentToGone.status));
}

// A rank may finish and leave before a peer connects (a scatter's root
// waits for nobody): the peer connects all the same, takes what it was
// sent, and sees the rank gone for anything more.
void peerLeavesBeforeConnect() {
  std::vector<std::unique_ptr<Transport>> ranks;
  for (int rank = 0; rank < 2; ++rank) ranks.push_back(comm::transport::createThreadsTransport());
  std::vector<PeerInfo> peers;
  for (auto& rank : ranks) peers.push_back({rank->localAddress(), true});
  ranks[0]->connect(0, peers);
  uint64_t value = 5, delivered = 0, more = 0;
  Request sent, received, receivedMore, sentToGone;
  ranks[0]->send(1, 8, &value, 8, sent);
  waitOk(*ranks[0], sent);
  ranks[0].reset();
  ranks[1]->connect(1, peers);
  ranks[1]->recv(0, 8, &delivered, 8, received);
  waitOk(*ranks[1], received);
  CHECK(delivered == 5, "{}", delivered);
  ranks[1]->recv(0, 9, &more, 8, receivedMore);
  CHECK(receivedMore.done && receivedMore.status == COMM_ERR_REMOTE, "status {}",
        static_cast<int>(receivedMore.status));
  ranks[1]->send(0, 1, &value, 8, sentToGone);
  CHECK(sentToGone.status == COMM_ERR_REMOTE, "status {}", static_cast<int>(sentToGone.status));
}

// Only ranks of this process: an address from another pid is refused.
void otherProcessRefused() {
  auto rank = comm::transport::createThreadsTransport();
  std::vector<uint8_t> address = rank->localAddress();
  const uint64_t otherPid = static_cast<uint64_t>(getpid()) + 1;
  std::memcpy(address.data(), &otherPid, sizeof otherPid);
  try {
    rank->connect(0, {{rank->localAddress(), true}, {address, true}});
  } catch (const comm::Error& error) {
    CHECK(std::string(error.what()).find("not this one") != std::string::npos, "{}", error.what());
    return;
  }
  CHECK(false, "{}", "connected to another process's rank");
}

// Ranks on threads of their own, each sending to every other at once.
void threadsAllToAll() {
  constexpr int kRanks = 8;
  constexpr int kRounds = 50;
  auto ranks = connected(kRanks);
  std::vector<std::string> failures(kRanks);
  std::vector<std::thread> threads;
  for (int self = 0; self < kRanks; ++self) {
    threads.emplace_back([&, self] {
      try {
        for (int round = 0; round < kRounds; ++round) {
          std::vector<uint64_t> in(kRanks), out(kRanks);
          std::vector<Request> sends(kRanks), receives(kRanks);
          for (int peer = 0; peer < kRanks; ++peer) ranks[self]->recv(peer, round, &in[peer], 8, receives[peer]);
          for (int peer = 0; peer < kRanks; ++peer) {
            out[peer] = self * 1000 + peer + round;
            ranks[self]->send(peer, round, &out[peer], 8, sends[peer]);
          }
          for (int peer = 0; peer < kRanks; ++peer) {
            waitOk(*ranks[self], sends[peer]);
            waitOk(*ranks[self], receives[peer]);
            CHECK(in[peer] == static_cast<uint64_t>(peer * 1000 + self + round), "from {}: {}", peer, in[peer]);
          }
        }
      } catch (const std::exception& error) {
        failures[self] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int self = 0; self < kRanks; ++self) CHECK(failures[self].empty(), "rank {}: {}", self, failures[self]);
}

void sizesBothOrdersTest(void**) { run(sizesBothOrders); }
void tagsAndOrderTest(void**) { run(tagsAndOrder); }
void mismatchTest(void**) { run(mismatch); }
void cancelTest(void**) { run(cancel); }
void peerLeavesTest(void**) { run(peerLeaves); }
void peerLeavesBeforeConnectTest(void**) { run(peerLeavesBeforeConnect); }
void otherProcessRefusedTest(void**) { run(otherProcessRefused); }
void threadsAllToAllTest(void**) { run(threadsAllToAll); }

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(sizesBothOrdersTest), cmocka_unit_test(tagsAndOrderTest),
      cmocka_unit_test(mismatchTest),        cmocka_unit_test(cancelTest),
      cmocka_unit_test(peerLeavesTest),      cmocka_unit_test(otherProcessRefusedTest),
      cmocka_unit_test(threadsAllToAllTest), cmocka_unit_test(peerLeavesBeforeConnectTest),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
