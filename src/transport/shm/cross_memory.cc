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

namespace {

using CrossMemoryCall = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

int copyCrossMemory(CrossMemoryCall call, pid_t pid, char* local, uint64_t remote, size_t bytes) {
  while (bytes > 0) {
    // The kernel moves at most about 2 GiB per call and may stop early.
    iovec here{local, bytes};
    iovec there{reinterpret_cast<void*>(remote), bytes};
    ssize_t moved = call(pid, &here, 1, &there, 1, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;
    local += moved;
    remote += static_cast<uint64_t>(moved);
    bytes -= static_cast<size_t>(moved);
  }
  return 0;
}

}  // namespace

int readCrossMemory(pid_t pid, void* local, uint64_t remote, size_t bytes) {
  return copyCrossMemory(process_vm_readv, pid, static_cast<char*>(local), remote, bytes);
}

int writeCrossMemory(pid_t pid, uint64_t remote, const void* local, size_t bytes) {
  // process_vm_writev only reads `local`.
  return copyCrossMemory(process_vm_writev, pid, const_cast<char*>(static_cast<const char*>(local)), remote, bytes);
}

}  // namespace comm::transport
