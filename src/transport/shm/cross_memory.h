// Cross-Memory Attach: copying straight from another process's memory
// (process_vm_readv), one copy instead of two through shared memory. The
// kernel allows it only where this process may ptrace the other (Yama's
// ptrace_scope, seccomp profiles and user namespaces of containers often
// forbid it), so it is probed before it is relied on.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace comm::transport {

// Whether the 8 bytes at `address` in `pid` can be read and hold `expected`.
// 0 when they can, otherwise the errno that says why not (EINVAL for wrong contents).
int probeCrossMemory(pid_t pid, uint64_t address, uint64_t expected);

// Copies `bytes` from `remote` in `pid` to `local`; 0 on success, else the
// errno (ESRCH: the process has exited; EFAULT: the range is not mapped there).
int readCrossMemory(pid_t pid, void* local, uint64_t remote, size_t bytes);

}  // namespace comm::transport
