// The matching engine comm's tcp and shm transports share
// (transport/matching_engine.h), without a wire: receives posted before
// their messages, messages that came first, the budget of early bytes, and
// the order of several receives and messages of one tag.
#include <string>
#include <vector>

#include "transport/matching_engine.h"
#include "transport/record_pool.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::transport::failMismatch;
using comm::transport::MatchingEngine;
using comm::transport::receiveWhole;
using comm::transport::RecordPool;
using comm::transport::Request;

namespace {

struct Receive {
  uint64_t tag = 0;
  Request* request = nullptr;
  Receive* prev = nullptr;
  Receive* next = nullptr;
};

struct Arrival {
  uint64_t tag = 0;
  size_t size = 0;
  bool rendezvous = false;
  bool promised = false;  // what a transport may mark on an arrival a receive waits for
  Arrival* prev = nullptr;
  Arrival* next = nullptr;
};

using Engine = MatchingEngine<Receive, Arrival>;

// Records as a transport keeps them: from pools, so that their addresses
// stay put while the engine links them.
struct Records {
  RecordPool<Receive> receives;
  RecordPool<Arrival> arrivals;

  Receive* receive(uint64_t tag, Request& request) {
    Receive* r = receives.acquire();
    *r = Receive{tag, &request};
    return r;
  }
  Arrival* arrival(uint64_t tag, size_t size, bool rendezvous = false) {
    Arrival* a = arrivals.acquire();
    *a = Arrival{tag, size, rendezvous};
    return a;
  }
  // A receive of `tag` for `request`, posted to `engine`.
  Receive* post(Engine& engine, uint64_t tag, Request& request) {
    Receive* r = receive(tag, request);
    engine.post(r);
    return r;
  }
};

// A receive posted before its message: the message of its tag takes it,
// one of another tag does not, and nothing is held meanwhile.
void postedFirst(void**) {
  Engine engine;
  Records records;
  Request request;
  Receive* posted = records.post(engine, 5, request);
  assert_true(engine.hasReceives());
  assert_null(engine.findArrival(5));
  assert_null(engine.takeReceive(6));
  assert_ptr_equal(engine.takeReceive(5), posted);
  assert_null(engine.takeReceive(5));
  assert_false(engine.hasReceives());
  assert_int_equal(engine.held(), 0);
}

// A message before its receive: held and counted until the receive finds
// it, then forgotten; a request-to-send counts its record only.
void unexpectedFirst(void**) {
  Engine engine;
  Records records;
  Arrival* eager = records.arrival(9, 100);
  engine.hold(eager);
  assert_int_equal(engine.held(), sizeof(Arrival) + 100);
  Arrival* announced = records.arrival(10, size_t{1} << 30, true);
  engine.hold(announced);
  assert_int_equal(engine.held(), 2 * sizeof(Arrival) + 100);

  assert_null(engine.takeReceive(9));
  assert_null(engine.findArrival(11));
  assert_ptr_equal(engine.findArrival(9), eager);
  engine.forget(eager);
  assert_null(engine.findArrival(9));
  assert_int_equal(engine.held(), sizeof(Arrival));
  assert_ptr_equal(engine.findArrival(10), announced);
  engine.forget(announced);
  assert_int_equal(engine.held(), 0);
}

// The budget bounds what is held: an arrival that would pass it is not
// admitted, announcements included, until a receive takes one.
void budgetExceeded(void**) {
  Engine engine;
  Records records;
  const size_t budget = 2 * Engine::cost(1000, false) + Engine::cost(1000, true);
  for (int i = 0; i < 2; ++i) {
    assert_true(engine.admits(Engine::cost(1000, false), budget));
    engine.hold(records.arrival(3, 1000));
  }
  assert_false(engine.admits(Engine::cost(1000, false), budget));
  assert_true(engine.admits(Engine::cost(size_t{1} << 40, true), budget));
  engine.hold(records.arrival(4, size_t{1} << 40, true));
  assert_int_equal(engine.held(), budget);
  assert_false(engine.admits(Engine::cost(0, false), budget));
  assert_false(engine.admits(Engine::cost(0, true), budget));

  engine.forget(engine.findArrival(3));
  assert_true(engine.admits(Engine::cost(1000, false), budget));
  assert_false(engine.admits(Engine::cost(1001, false), budget));
}

// Receives of one tag meet its messages in the order both were posted,
// whichever comes first, and another tag's between them changes nothing.
void orderOfOneTag(void**) {
  Engine engine;
  Records records;
  Request first, other, second;
  Receive* r1 = records.post(engine, 7, first);
  Receive* r2 = records.post(engine, 8, other);
  Receive* r3 = records.post(engine, 7, second);
  assert_ptr_equal(engine.takeReceive(7), r1);
  assert_ptr_equal(engine.takeReceive(7), r3);
  assert_ptr_equal(engine.takeReceive(8), r2);

  Arrival* a1 = records.arrival(7, 1);
  Arrival* a2 = records.arrival(8, 2);
  Arrival* a3 = records.arrival(7, 3);
  engine.hold(a1);
  engine.hold(a2);
  engine.hold(a3);
  assert_ptr_equal(engine.findArrival(7), a1);
  // An arrival a receive was promised already is passed over.
  a1->promised = true;
  assert_ptr_equal(engine.findArrival(7, [](const Arrival& a) { return !a.promised; }), a3);
  engine.forget(a1);
  assert_ptr_equal(engine.findArrival(7), a3);
}

// A cancel takes its receive off the queue; a peer's end takes them all, in
// posting order, and drops the arrivals it chooses, uncounted.
void cancelAndPeerGone(void**) {
  Engine engine;
  Records records;
  Request a, b, c;
  records.post(engine, 1, a);
  Receive* rb = records.post(engine, 1, b);
  records.post(engine, 2, c);
  Request stranger;
  assert_null(engine.receiveOf(stranger));
  assert_ptr_equal(engine.receiveOf(b), rb);
  engine.unpost(rb);
  records.receives.release(rb);
  std::vector<Request*> taken;
  engine.takeEveryReceive([&](Receive& r) {
    taken.push_back(r.request);
    records.receives.release(&r);
  });
  assert_int_equal(taken.size(), 2);
  assert_ptr_equal(taken[0], &a);
  assert_ptr_equal(taken[1], &c);
  assert_false(engine.hasReceives());

  engine.hold(records.arrival(1, 10));
  engine.hold(records.arrival(2, 20, true));
  engine.hold(records.arrival(3, 30));
  std::vector<uint64_t> dropped;
  engine.forgetIf([](const Arrival& m) { return m.tag != 3; },
                  [&](Arrival& m) {
                    dropped.push_back(m.tag);
                    records.arrivals.release(&m);
                  });
  assert_int_equal(dropped.size(), 2);
  assert_int_equal(dropped[0], 1);
  assert_int_equal(dropped[1], 2);
  assert_int_equal(engine.held(), Engine::cost(30, false));
  assert_non_null(engine.findArrival(3));
}

// A whole message lands in a receive of its size; any other size fails the
// receive naming both sizes and leaves its buffer alone.
void wholeMessages(void**) {
  const std::string message = "eight by";
  std::string buffer(8, '.');
  Request fits;
  receiveWhole(fits, "test", 3, 0x2a, buffer.data(), buffer.size(), message.data(), message.size());
  assert_int_equal(fits.status, COMM_OK);
  assert_int_equal(fits.bytes, 8);
  assert_string_equal(buffer.c_str(), "eight by");

  std::string small(4, '.');
  Request tooLarge;
  receiveWhole(tooLarge, "test", 3, 0x2a, small.data(), small.size(), message.data(), message.size());
  assert_int_equal(tooLarge.status, COMM_ERR_MISMATCH);
  assert_string_equal(tooLarge.error.c_str(), "test: message from rank 3 with tag 0x2a is 8 bytes, expected 4");
  assert_string_equal(small.c_str(), "....");

  Request announced;
  failMismatch(announced, "test", 1, 0x10, size_t{1} << 20, 16);
  assert_int_equal(announced.status, COMM_ERR_MISMATCH);
  assert_false(announced.done.load());
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(postedFirst),   cmocka_unit_test(unexpectedFirst),   cmocka_unit_test(budgetExceeded),
      cmocka_unit_test(orderOfOneTag), cmocka_unit_test(cancelAndPeerGone), cmocka_unit_test(wholeMessages),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
