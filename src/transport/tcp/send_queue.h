// What this rank sends on one of comm's tcp connections, in order: each
// message framed as tcp_wire.h says and written in batches, a large one
// announced (kRequestToSend) and kept until the receiver's go-ahead
// (kClearToSend) lets its payload follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

namespace comm::transport::tcp {

class SendQueue {
 public:
  // What write() did.
  struct Written {
    bool completed = false;  // a request completed
    size_t messages = 0;     // whole messages written (off the queue)
    int error = 0;           // the errno that ended the connection, or 0
  };

  // Nothing waits to be written.
  bool empty() const { return sends_.empty(); }
  size_t size() const { return sends_.size(); }
  // An announced message waits for its go-ahead.
  bool announcing() const { return !announced_.empty(); }
  // ... or a withdrawn one, which answers its go-ahead with kWithdrawn.
  bool awaitsGoAhead() const { return !announced_.empty() || !withdrawn_.empty(); }

  // Queues `header` and its payloadBytes() at `data`; `request` completes
  // once all of it is written (null: a control message).
  void push(const Header& header, const char* data, Request* request) { sends_.push_back({header, data, request}); }
  // Keeps the message of `size` bytes at `data` until the peer clears it;
  // returns its number, which its request-to-send carries.
  uint32_t announce(const char* data, size_t size, Request& request);
  // Queues the answer to the peer's `clearToSend`: the payload it cleared,
  // or kWithdrawn for a message cancelled meanwhile. False, queuing
  // nothing, when no message of that number was announced.
  bool clear(const Header& clearToSend);

  // Writes what socket `fd` takes now, as many queued messages per system
  // call as it can.
  Written write(int fd);
  // Gives `request`'s buffer back to the caller if it is one of these
  // sends, completing it COMM_ERR_ABORTED; returns whether it was.
  bool cancel(Request& request);
  // Fails every send with `status` and `why` and forgets them all; returns
  // how many messages were queued.
  size_t fail(comm_status_t status, const std::string& why);

 private:
  struct QueuedSend {
    Header header;
    const char* data;
    Request* request;              // null for control messages and sends cancelled mid-way
    size_t sent = 0;               // of sizeof(Header) + payloadBytes(header)
    std::unique_ptr<char[]> copy;  // what `data` points into once the caller's buffer was given back
  };
  // A large message announced and waiting for the receiver's go-ahead.
  struct AnnouncedSend {
    const char* data;
    size_t size;
    Request* request;
  };

  std::deque<QueuedSend> sends_;
  std::unordered_map<uint32_t, AnnouncedSend> announced_;  // by the sender's number
  std::unordered_set<uint32_t> withdrawn_;  // announced, then cancelled: answered with kWithdrawn when cleared
  uint32_t nextSendId_ = 0;
};

}  // namespace comm::transport::tcp
