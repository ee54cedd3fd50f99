// What the direct shared-memory transport (shm_transport.h) is created with:
// its mode, read from the "shm" setting, and its own limits.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace comm::transport {

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

}  // namespace comm::transport
