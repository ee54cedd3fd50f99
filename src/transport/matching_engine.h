// The matching of one peer's tagged messages to this rank's receives,
// shared by the transports that carry their own wire (comm's tcp and shm),
// in the manner of libfabric's shared receive context
// (prov/util/src/util_srx.c): a fix to the matching or to the accounting of
// early messages is made here once.
//
// One vocabulary for every transport:
//   receive          what the caller posted (Transport::recv) and no message
//                    has met yet; receives of one tag wait in posting order
//   arrival          a message that came before its receive (unexpected)
//   eager            a message that travels whole, its bytes behind its header
//   request-to-send  the announcement of a message too large to go eagerly;
//                    its arrival is a rendezvous and holds no bytes
//   clear-to-send    the receiver's go-ahead for a request-to-send once a
//                    receive met it: now the payload may come
// Each transport keeps its own wire (tcp/tcp_wire.h, shm/shm_protocol.h)
// and its own records; this engine holds them, finds the match, and counts
// what early messages cost against the budget the transport sets. What
// happens past the budget is the transport's: both leave the peer's
// messages unread (tcp in its socket, shm in its ring), so that its sends
// wait (back-pressure) until receives take some arrivals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transport/intrusive_list.h"
#include "transport/transport.h"

namespace comm::transport {

// One per peer. Receive has members `uint64_t tag` and `Request* request`;
// Arrival has `uint64_t tag`, `size_t size` (the message's bytes) and
// `bool rendezvous` (a request-to-send: none of them here); both have
// `prev` and `next` for IntrusiveList. The transport owns the records
// (RecordPool) and hands them in; the engine only links them.
template <typename Receive, typename Arrival>
class MatchingEngine {
 public:
  // What an arrival of `size` bytes counts against the budget: its record,
  // so that a flood of empty messages or of announcements is bounded too,
  // and its bytes when it brought them.
  static constexpr size_t cost(size_t size, bool rendezvous) { return sizeof(Arrival) + (rendezvous ? 0 : size); }

  // Receives.
  //
  // Waits for the next message of its tag: call once findArrival() found none.
  void post(Receive* receive) { receives_.pushBack(receive); }
  // The first receive posted for `tag`, taken off the queue, or nullptr.
  Receive* takeReceive(uint64_t tag) {
    Receive* receive = receives_.find([tag](const Receive& r) { return r.tag == tag; });
    if (receive != nullptr) receives_.remove(receive);
    return receive;
  }
  // The posted receive of `request` (a cancel), or nullptr; unpost() takes it off.
  Receive* receiveOf(const Request& request) const {
    return receives_.find([&request](const Receive& r) { return r.request == &request; });
  }
  void unpost(Receive* receive) { receives_.remove(receive); }
  // Takes every posted receive off the queue, in posting order, handing
  // each to `each` once it is off (the peer is gone).
  template <typename Each>
  void takeEveryReceive(Each&& each) {
    while (Receive* receive = receives_.front()) {
      receives_.remove(receive);
      each(*receive);
    }
  }
  bool hasReceives() const { return !receives_.empty(); }
  bool hasReceiveFor(uint64_t tag) const {
    return receives_.find([tag](const Receive& r) { return r.tag == tag; }) != nullptr;
  }

  // Arrivals.
  //
  // Whether an arrival costing `cost` stays within `budget` bytes with
  // those held already.
  bool admits(size_t cost, size_t budget) const { return held_ + cost <= budget; }
  // Keeps `arrival` (its fields set) for a receive yet to come, counted.
  void hold(Arrival* arrival) {
    held_ += cost(arrival->size, arrival->rendezvous);
    arrivals_.pushBack(arrival);
  }
  // The first arrival of `tag` that `available` accepts (a transport may
  // have promised one to a receive already), in arrival order, or nullptr;
  // it stays held until forget().
  template <typename Available>
  Arrival* findArrival(uint64_t tag, Available&& available) const {
    return arrivals_.find([&](const Arrival& a) { return a.tag == tag && available(a); });
  }
  Arrival* findArrival(uint64_t tag) const {
    return findArrival(tag, [](const Arrival&) { return true; });
  }
  // Lets go of `arrival`: no longer counted, the caller may reuse it.
  void forget(Arrival* arrival) {
    held_ -= cost(arrival->size, arrival->rendezvous);
    arrivals_.remove(arrival);
  }
  // The first arrival `match` accepts, in arrival order, or nullptr.
  template <typename Match>
  Arrival* arrivalWhere(Match&& match) const {
    return arrivals_.find(match);
  }
  // Forgets every arrival `drop` accepts, in arrival order, handing each to
  // `forgotten` once it is (which may reuse it).
  template <typename Drop, typename Forgotten>
  void forgetIf(Drop&& drop, Forgotten&& forgotten) {
    arrivals_.removeIf(drop, [&](Arrival& a) {
      held_ -= cost(a.size, a.rendezvous);
      forgotten(a);
    });
  }
  // Bytes the held arrivals count against the budget.
  size_t held() const { return held_; }

 private:
  IntrusiveList<Receive> receives_;  // in posting order
  IntrusiveList<Arrival> arrivals_;  // in arrival order
  size_t held_ = 0;
};

// How a whole message meets its receive, the same in every transport; each
// leaves marking the request done to its caller.
//
// A message of `arrived` bytes is not the `expected` of its receive.
// `transport` names the transport in the cause ("tcp", "shm").
inline void failMismatch(Request& request, const char* transport, int peer, uint64_t tag, size_t arrived,
                         size_t expected) {
  request.fail(COMM_ERR_MISMATCH, "{}: message from rank {} with tag {:#x} is {} bytes, expected {}", transport, peer,
               tag, arrived, expected);
}

// The `arrived` bytes at `data` land in the receive of `expected` bytes at
// `buffer`, or the receive fails when the sizes differ.
inline void receiveWhole(Request& request, const char* transport, int peer, uint64_t tag, void* buffer, size_t expected,
                         const char* data, size_t arrived) {
  if (arrived != expected) return failMismatch(request, transport, peer, tag, arrived, expected);
  if (arrived != 0) std::memcpy(buffer, data, arrived);
  request.bytes = arrived;
}

}  // namespace comm::transport
