// CUDA IPC: a process on the node opens another's device buffer and copies
// to or from it with the copy engines, no host round trip. The handles
// travel as cuda/ipc_handle.h says.
#pragma once

#include <cstddef>

#include "cuda/ipc_handle.h"

namespace comm::cuda {

// The handle of the device buffer [data, data + bytes) of device `device`
// (any part of a cudaMalloc allocation). Throws comm::Error naming the
// runtime call that failed.
IpcHandle exportBuffer(const void* data, size_t bytes, int device);

// A peer's buffer, mapped into this process while the object lives.
class PeerBuffer {
 public:
  // Opens `handle` on this process's device `device` (the peer's device or
  // one with peer access to it). Throws COMM_ERR_INVALID_ARGUMENT for a
  // handle of this very process (CUDA cannot open those), else comm::Error
  // naming the runtime call that failed.
  PeerBuffer(const IpcHandle& handle, int device);
  ~PeerBuffer();
  PeerBuffer(const PeerBuffer&) = delete;
  PeerBuffer& operator=(const PeerBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* base_ = nullptr;  // what cudaIpcOpenMemHandle mapped: the allocation's start
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace comm::cuda
