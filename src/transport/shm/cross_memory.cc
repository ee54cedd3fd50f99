#include "transport/shm/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>

namespace comm::transport {

int probeCrossMemory(pid_t pid, uint64_t address, uint64_t expected) {
  uint64_t value = 0;
  int error = readCrossMemory(pid, &value, address, sizeof value);
  if (error != 0) return error;
  return value == expected ? 0 : EINVAL;
}

int readCrossMemory(pid_t pid, void* local, uint64_t remote, size_t bytes) {
  auto* to = static_cast<char*>(local);
  while (bytes > 0) {
    // The kernel moves at most about 2 GiB per call and may stop early.
    iovec into{to, bytes};
    iovec from{reinterpret_cast<void*>(remote), bytes};
    ssize_t moved = process_vm_readv(pid, &into, 1, &from, 1, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;
    to += moved;
    remote += static_cast<uint64_t>(moved);
    bytes -= static_cast<size_t>(moved);
  }
  return 0;
}

}  // namespace comm::transport
