// What a rank of comm's direct shared-memory transport publishes for the
// others on its node (through the store, as its Transport::localAddress):
// where its segment is, how to probe it for Cross-Memory Attach, and the
// CPUs it may run on.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace comm::transport {

struct ShmAddress {
  pid_t pid = 0;
  uint64_t nonce = 0;
  uint64_t probe = 0;  // address of `nonce` in that process
  cpu_set_t cpus{};    // its affinity when it published this
  std::string segment;
};

// The CPUs this process may run on now.
cpu_set_t affinity();

std::vector<uint8_t> encodeAddress(const ShmAddress& address);
// `blob`, what rank `rank` published; throws comm::Error (COMM_ERR_TRANSPORT)
// when it is not an address this build understands.
ShmAddress decodeAddress(const std::vector<uint8_t>& blob, int rank);

}  // namespace comm::transport
