// comm's tcp transport's message engine: what travels on the connections
// once connector.h has made them. Sends are framed (tcp_wire.h) and queued
// per connection (send_queue.h); what arrives is parsed from each
// connection's inbox and matched to receives (matching_engine.h); early
// messages are held within the budget, past which the peer's connection
// fails. Not thread-safe: the transport calls it under its lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "transport/record_pool.h"
#include "transport/tcp/connection.h"
#include "transport/tcp/payload_pool.h"
#include "transport/transport.h"

namespace comm::transport::tcp {

class MessageEngine {
 public:
  // Holds up to `maxUnexpected` bytes of early messages per peer.
  explicit MessageEngine(size_t maxUnexpected);

  // Takes the proven sockets connector.h made, by rank, as the
  // connections; this rank's own (`self`) has no socket: its messages to
  // itself are handed over at once.
  void open(int self, std::vector<UniqueFd> sockets);

  // Transport::send and recv, for `peer`.
  void send(int peer, uint64_t tag, const char* data, size_t size, Request& request);
  void recv(int peer, uint64_t tag, char* data, size_t size, Request& request);
  // Transport::cancel: withdraws `request` from whichever connection has it.
  void cancel(Request& request);

  // For the transport's progress loop, by rank (null: no connection).
  const std::vector<std::unique_ptr<Connection>>& connections() const { return connections_; }
  // Reports which connections have bytes to read (epoll_wait).
  int readiness() const { return epoll_.get(); }
  // Connections to peers not dead.
  size_t live() const { return live_; }
  // Messages queued on all connections and not yet written.
  size_t queuedSends() const { return queuedSends_; }
  // Each returns true when a request completed.
  bool readFrom(Connection& c);
  bool writeTo(Connection& c);
  // Transport::busy: a transfer under way moves only while progress runs.
  bool busy() const { return busy_.load(std::memory_order_relaxed); }
  void updateBusy();
  // Tells every peer this rank is shutting down (kGoodbye), where nothing
  // queued would be cut off.
  void sayGoodbye();

 private:
  Connection& connection(int peer);
  // Makes `fd` the non-blocking connection to `peer`.
  void adopt(int peer, UniqueFd fd);
  bool startMessage(Connection& c, const Header& header);
  bool finishIncoming(Connection& c);
  bool deliver(Connection& c, Arrival& message, const Destination& receive);
  // Answers the request-to-send of message `sendId` (`size` bytes) with the
  // go-ahead for `receive`; returns true when it completed the receive (a
  // size mismatch: the payload is then dropped on arrival).
  bool clearToSend(Connection& c, uint64_t tag, size_t size, uint32_t sendId, const Destination& receive);
  // Whether `request` waits on `c`'s receiving side; if so it is cancelled.
  bool cancelReceive(Connection& c, Request& request);
  // The first receive posted on `c` for `tag`, taken off its queue.
  std::optional<Destination> takeReceive(Connection& c, uint64_t tag);
  // A record for an arrival of `size` bytes with `tag`, its other fields unset.
  Arrival* newArrival(uint64_t tag, size_t size);
  // Lets go of `message` and its buffer.
  void forget(Connection& c, Arrival& message);
  void queue(Connection& c, const Header& header, const char* data, Request* request);
  // Counts a message just queued on a connection.
  void queued();
  // A message to this rank: delivered (or kept as an arrival) at once.
  void sendToSelf(Connection& c, uint64_t tag, const char* data, size_t size, Request& request);
  // Fails everything pending with the peer: COMM_ERR_REMOTE when it went
  // away, COMM_ERR_TRANSPORT when it broke the protocol. `quiet`: an expected
  // end (the peer said goodbye), logged at debug level only.
  void markDead(Connection& c, std::string why, comm_status_t status = COMM_ERR_REMOTE, bool quiet = false);
  // Whether `header` starts a message no receive waits for that would take
  // `c`'s peer past the budget of early bytes: it then waits in the socket.
  bool overBudget(const Connection& c, const Header& header) const;

  const size_t maxUnexpected_;
  UniqueFd epoll_;
  PayloadPool payloads_{kEagerBytes};  // the buffers of early messages
  RecordPool<Receive> receives_;       // the records connections' matching engines link
  RecordPool<Arrival> arrivals_;
  // By rank; this rank's has no socket (sendToSelf), ranks not reached have none.
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t queuedSends_ = 0;
  size_t live_ = 0;
  int self_ = -1;
  std::atomic<bool> busy_{false};
};

}  // namespace comm::transport::tcp
