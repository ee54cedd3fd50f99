// What only comm's tcp transport does, between real processes
// (forked_ranks.h): a send cancelled because its operation failed gives its
// buffer back at once, yet the peer's stream stays whole. Messages already
// queued go from copies; a large one waiting for the go-ahead, or cleared
// and not yet started, is withdrawn and the peer's receive fails naming the
// sender. What every transport does is in transport_conformance_test.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "transport/hybrid_transport.h"
#include "transport/tcp/tcp_wire.h"

#include "forked_ranks.h"
#include "transport_test_support.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace transport_test;

using comm::transport::Options;
using comm::transport::Request;
using comm::transport::tcp::kEagerBytes;

void runRanks(int size, const Body& body) { assert_int_equal(forkRanks(size, body), 0); }

std::unique_ptr<Transport> tcp(size_t maxUnexpectedBytes = 0) {
  Options options;
  options.tcp.maxUnexpectedBytes = maxUnexpectedBytes;
  options.provider = "tcp";
  options.singleNode = true;
  options.secret = "tcp transport test secret 0123456789";
  return comm::transport::createNetworkTransport(options);
}

// More eager messages than the sockets between two ranks hold, so that most
// of them are still queued at the sender when it cancels them.
constexpr int kFlood = 32;
constexpr uint64_t kFloodTag = 7;
constexpr uint64_t kClearedTag = 8;    // cleared before the flood, its payload queued behind it
constexpr uint64_t kAnnouncedTag = 9;  // announced, never cleared before the cancel
constexpr uint64_t kAfterTag = 10;     // a message after all that, to show the stream is whole
constexpr size_t kLarge = 3 * kEagerBytes + 5;

void scribble(Bytes& buffer) { std::fill(buffer.begin(), buffer.end(), 0xEE); }

// A barrier during which this rank reads nothing from its transport (the
// usual one progresses it while it waits).
void quietBarrier(Rank& self) {
  std::unique_ptr<Transport> held = std::move(self.transport);
  self.barrier();
  self.transport = std::move(held);
}

void checkWithdrawn(const Request& request, int sender) {
  CHECK(request.done.load(), "a receive of a withdrawn message is not done");
  CHECK(request.status == COMM_ERR_REMOTE, "status {} ({})", static_cast<int>(request.status), request.error);
  CHECK(request.error.find(fmt::format("rank {} withdrew", sender)) != std::string::npos, "error: {}", request.error);
}

void test_cancelled_sends_give_buffers_back(void**) {
  runRanks(2, [&](Rank& self) {
    self.connect(tcp());
    Transport& transport = *self.transport;
    std::vector<Bytes> flood(kFlood);
    std::vector<Request> floodRequests(kFlood);
    Bytes cleared = self.rank == 0 ? pattern(kLarge, 1) : Bytes(kLarge, 0);
    Bytes announced = self.rank == 0 ? pattern(kLarge, 2) : Bytes(kLarge, 0);
    Request clearedRequest, announcedRequest;
    // Rank 0 announces the large message and then reads nothing until the
    // flood is queued, so that the go-ahead rank 1 sends meanwhile puts the
    // payload behind the flood.
    if (self.rank == 0) {
      transport.send(1, kClearedTag, cleared.data(), kLarge, clearedRequest);
      transport.progress();
    } else {
      transport.recv(0, kClearedTag, cleared.data(), kLarge, clearedRequest);
      self.pump(50ms);
    }
    quietBarrier(self);
    if (self.rank == 0) {
      for (int i = 0; i < kFlood; ++i) {
        flood[i] = pattern(kEagerBytes, 100 + i);
        transport.send(1, kFloodTag, flood[i].data(), kEagerBytes, floodRequests[i]);
      }
      transport.send(1, kAnnouncedTag, announced.data(), kLarge, announcedRequest);
      // Reads the go-ahead, writes what the socket takes of the flood.
      transport.progress();
      CHECK(!clearedRequest.done.load(), "the cleared payload went before a flood the socket cannot hold");
      CHECK(!floodRequests.back().done.load(), "the whole flood went at once");
      for (Request& request : floodRequests) transport.cancel(request);
      transport.cancel(clearedRequest);
      transport.cancel(announcedRequest);
      for (const Request* request : {&clearedRequest, &announcedRequest}) {
        CHECK(request->done.load() && request->status == COMM_ERR_ABORTED, "status {} ({})",
              static_cast<int>(request->status), request->error);
      }
      CHECK(std::all_of(floodRequests.begin(), floodRequests.end(), [](const Request& r) { return r.done.load(); }),
            "a flood send is not done after cancel");
      // The buffers are the caller's again: what the peer gets must not change.
      for (Bytes& buffer : flood) scribble(buffer);
      scribble(cleared);
      scribble(announced);
    }
    quietBarrier(self);
    if (self.rank == 1) {
      for (int i = 0; i < kFlood; ++i) {
        flood[i].assign(kEagerBytes, 0);
        transport.recv(0, kFloodTag, flood[i].data(), kEagerBytes, floodRequests[i]);
      }
      for (int i = 0; i < kFlood; ++i) {
        waitOk(transport, floodRequests[i]);
        checkPattern(flood[i], kEagerBytes, 100 + i);
      }
      waitFor(transport, clearedRequest);
      checkWithdrawn(clearedRequest, 0);
      transport.recv(0, kAnnouncedTag, announced.data(), kLarge, announcedRequest);
      waitFor(transport, announcedRequest);
      checkWithdrawn(announcedRequest, 0);
    }
    // The connection still carries messages both ways.
    Bytes out = pattern(kLarge, 50 + self.rank);
    Bytes in(kLarge, 0);
    Request sent, received;
    transport.recv(self.peer(), kAfterTag, in.data(), kLarge, received);
    transport.send(self.peer(), kAfterTag, out.data(), kLarge, sent);
    waitOk(transport, sent);
    waitOk(transport, received);
    checkPattern(in, kLarge, 50 + self.peer());
    self.barrier();
  });
}

// A sender far ahead of its receiver: the receiver holds only
// maxUnexpectedBytes of early messages and then leaves the rest in the
// socket, so that the sender's later sends wait in its own queue
// (back-pressure) instead of the receiver's memory growing or the
// connection failing; once the receives are posted every message arrives,
// in order. More bytes than the sockets between the two hold.
void test_early_messages_held_back(void**) {
  constexpr int kMessages = 800;
  constexpr size_t kSize = 64 * 1024;
  runRanks(2, [&](Rank& self) {
    self.connect(tcp(8 * kSize));
    std::vector<Bytes> data(kMessages);
    std::vector<Request> requests(kMessages);
    for (int i = 0; i < kMessages; ++i) data[i] = self.rank == 0 ? pattern(kSize, i) : Bytes(kSize, 0);
    if (self.rank == 0) {
      for (int i = 0; i < kMessages; ++i) self.transport->send(1, 4, data[i].data(), kSize, requests[i]);
    }
    self.pump(std::chrono::milliseconds(300));
    self.barrier();
    if (self.rank == 0) {
      const auto sent = std::count_if(requests.begin(), requests.end(), [](const Request& r) { return r.done.load(); });
      CHECK(sent > 0 && sent < kMessages, "{} of {} early sends completed; the receiver holds {} bytes", sent,
            kMessages, 8 * kSize);
    }
    self.barrier();
    if (self.rank == 1) {
      for (int i = 0; i < kMessages; ++i) self.transport->recv(0, 4, data[i].data(), kSize, requests[i]);
    }
    for (Request& request : requests) waitOk(*self.transport, request);
    if (self.rank == 1) {
      for (int i = 0; i < kMessages; ++i) checkPattern(data[i], kSize, i);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_cancelled_sends_give_buffers_back),
      cmocka_unit_test(test_early_messages_held_back),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
