// Direct shared memory between the ranks of one node, without libfabric:
// every ordered pair of ranks has a ring of slots (channel.h) in the
// receiver's segment (shm_segment.h). A message that fits a slot is copied
// in by the sender and out by the receiver. A larger one is announced by a
// request-to-send; once a receive matches it, the receiver either clears the
// sender to stream it through the ring in slot-sized chunks, or copies it
// straight out of the sender's memory with Cross-Memory Attach
// (process_vm_readv) and answers with a finish (ShmMode says which).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "transport/transport.h"

namespace comm::transport {

// What providerFor() says about peers this transport serves.
inline constexpr const char* kShmDirectProvider = "shm-direct";

enum class ShmMode {
  kOff,     // peers on the node go through libfabric's shm provider
  kAuto,    // direct; large messages streamed through the rings, or read by
            // Cross-Memory Attach when the node's ranks may together run on
            // fewer CPUs than there are of them
  kAttach,  // direct; large messages always read by Cross-Memory Attach where the kernel allows it
  kCopy,    // direct; large messages always streamed through the rings
};

// Reads the "shm" setting: "1", "0", "attach" or "copy"; throws comm::Error
// (COMM_ERR_INVALID_ARGUMENT) naming COMM_SHM otherwise.
ShmMode parseShmMode(std::string_view value);

struct ShmOptions {
  ShmMode mode = ShmMode::kAuto;
  // How long connect() waits for a peer on the node to create its segment.
  std::chrono::milliseconds connectTimeout{60000};
  // Bytes of messages that arrived before their receives held for one peer
  // (each counted with its bookkeeping). Beyond it the peer's ring is left
  // unread until receives take some, so that its sends wait (back-pressure)
  // instead of this rank's memory growing. 0: 256 MiB.
  size_t maxUnexpectedBytes = 0;
};

// Serves the peers whose PeerInfo says sameNode and whose address is not
// empty (the blob another ShmTransport's localAddress() returned); connect()
// ignores the others and send/recv to them throw COMM_ERR_INVALID_ARGUMENT.
// `options.mode` must not be kOff.
std::unique_ptr<Transport> createShmTransport(const ShmOptions& options);

}  // namespace comm::transport
