// Direct shared memory between the ranks of one node, without libfabric:
// every ordered pair of ranks has a ring of slots (channel.h) in the
// receiver's segment (shm_segment.h). A message that fits a slot is copied
// in by the sender and out by the receiver. A larger one is announced by a
// request-to-send; once a receive matches it, the receiver either clears the
// sender to stream it through the ring in slot-sized chunks, or copies it
// straight out of the sender's memory with Cross-Memory Attach
// (process_vm_readv) and answers with a finish (ShmMode says which).
#pragma once

#include <memory>

#include "transport/shm/shm_options.h"
#include "transport/transport.h"

namespace comm::transport {

// What providerFor() says about peers this transport serves.
inline constexpr const char* kShmDirectProvider = "shm-direct";

// Serves the peers whose PeerInfo says sameNode and whose address is not
// empty (the blob another ShmTransport's localAddress() returned); connect()
// ignores the others and send/recv to them throw COMM_ERR_INVALID_ARGUMENT.
// `options.mode` must not be kOff.
std::unique_ptr<Transport> createShmTransport(const ShmOptions& options);

}  // namespace comm::transport
