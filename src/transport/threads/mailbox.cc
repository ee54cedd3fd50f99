#include "transport/threads/mailbox.h"

#include <cstring>

#include "transport/threads/threads_transport.h"

namespace comm::transport::threads {

Mailbox::Engine& Mailbox::engine(int peer) {
  if (static_cast<size_t>(peer) >= peers_.size()) {
    // Records link to each other, not to their list's head: engines move whole.
    peers_.resize(peer + 1);
    gone_.resize(peer + 1, false);
  }
  return peers_[peer];
}

bool Mailbox::deliver(int from, uint64_t tag, const void* data, size_t size) {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  Engine& matching = engine(from);
  if (Receive* receive = matching.takeReceive(tag)) {
    receiveWhole(*receive->request, kThreadsProvider, from, tag, receive->data, receive->size,
                 static_cast<const char*>(data), size);
    receive->request->markDone();
    receives_.release(receive);
    return true;
  }
  // A rank's own threads are its only senders: nothing bounds what they hold
  // but the process's memory, as with a rank's messages to itself over tcp.
  Arrival* arrival = arrivals_.acquire();
  arrival->tag = tag;
  arrival->size = size;
  const auto* bytes = static_cast<const char*>(data);
  arrival->bytes.assign(bytes, bytes + size);
  matching.hold(arrival);
  return true;
}

void Mailbox::post(int from, uint64_t tag, void* data, size_t size, Request& request) {
  std::lock_guard lock(mutex_);
  request.restart();
  Engine& matching = engine(from);
  if (Arrival* arrival = matching.findArrival(tag)) {
    receiveWhole(request, kThreadsProvider, from, tag, data, size, arrival->bytes.data(), arrival->size);
    matching.forget(arrival);
    arrivals_.release(arrival);
    return request.markDone();
  }
  if (closed_) {
    request.fail(COMM_ERR_ABORTED, "{}: this rank's transport is closed", kThreadsProvider);
    return request.markDone();
  }
  if (gone_[from]) {
    request.fail(COMM_ERR_REMOTE, "{}: rank {} has left", kThreadsProvider, from);
    return request.markDone();
  }
  Receive* receive = receives_.acquire();
  *receive = {tag, &request, data, size, nullptr, nullptr};
  matching.post(receive);
}

void Mailbox::cancel(Request& request) {
  std::lock_guard lock(mutex_);
  for (Engine& matching : peers_) {
    if (Receive* receive = matching.receiveOf(request)) {
      matching.unpost(receive);
      receives_.release(receive);
      request.fail(COMM_ERR_ABORTED, "{}: receive cancelled", kThreadsProvider);
      return request.markDone();
    }
  }
}

void Mailbox::peerLeft(int peer) {
  std::lock_guard lock(mutex_);
  Engine& matching = engine(peer);
  gone_[peer] = true;
  matching.takeEveryReceive([&](Receive& receive) {
    receive.request->fail(COMM_ERR_REMOTE, "{}: rank {} has left", kThreadsProvider, peer);
    receive.request->markDone();
    receives_.release(&receive);
  });
}

void Mailbox::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  for (Engine& matching : peers_) {
    matching.takeEveryReceive([&](Receive& receive) {
      receive.request->fail(COMM_ERR_ABORTED, "{}: this rank's transport is closed", kThreadsProvider);
      receive.request->markDone();
      receives_.release(&receive);
    });
    matching.forgetIf([](const Arrival&) { return true; }, [&](Arrival& arrival) { arrivals_.release(&arrival); });
  }
}

}  // namespace comm::transport::threads
