// Holds a CUDA stream at a point until the host says go, without a host
// thread waiting: the stream waits until a word of pinned host memory
// reaches its ticket, by a stream memory operation (cuStreamWaitValue64)
// where the device has them, else by a one-thread kernel of comm's own
// that sleeps between looks at the word. Tickets of
// one gate open in the order they were taken, which is the order of a
// communicator's collectives.
#pragma once

#include <cstdint>

namespace comm::cuda {

class StreamGate {
 public:
  // Throws comm::Error naming the runtime call that failed.
  StreamGate();
  // The word is not freed: a kernel enqueued on a stream the user stalls may
  // still read it after every comm object is gone (a page per communicator).
  ~StreamGate() = default;
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Enqueue on `stream` (a cudaStream_t of the current device) a wait for
  // the next ticket, and return the ticket.
  uint64_t close(void* stream);
  // Let every stream waiting for `ticket`, or an earlier one, go on.
  void open(uint64_t ticket);

 private:
  uint64_t* word_ = nullptr;  // pinned, mapped into every device's address space
  uint64_t next_ = 0;         // the last ticket handed out
};

}  // namespace comm::cuda
