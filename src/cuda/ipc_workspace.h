// A communicator's device scratch buffer, exported to the other processes
// that use the same GPU, and theirs mapped into this process: where ranks
// sharing a device meet to reduce and gather on it, with the copy engines
// and comm's kernels, no host round trip (algo/device/ipc_all_reduce.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "cuda/ipc.h"
#include "cuda/ipc_handle.h"

namespace comm::cuda {

// What tells GPUs apart across processes, whatever ordinal each process's
// CUDA_VISIBLE_DEVICES gives them: the device's UUID.
using DeviceUuid = std::array<uint8_t, 16>;
DeviceUuid deviceUuid(int device);
// Whether kernels and copies on `device` can address memory of the GPU
// `other` names: the same GPU, or one this process sees to which `device`
// has peer access (NVLink or PCIe; cudaDeviceCanAccessPeer).
bool canReach(int device, const DeviceUuid& other);

class IpcWorkspace {
 public:
  IpcWorkspace() = default;
  // Frees the scratch and closes the peers' mappings.
  ~IpcWorkspace();
  IpcWorkspace(const IpcWorkspace&) = delete;
  IpcWorkspace& operator=(const IpcWorkspace&) = delete;

  // This process's scratch on `device`, kScratchBytes, made and exported on
  // first use (or when the device changes).
  static constexpr size_t kScratchBytes = size_t{32} << 20;
  void prepare(int device);
  char* scratch() const { return scratch_; }
  const IpcHandle& handle() const { return handle_; }

  // Rank `rank`'s scratch as this process addresses it, opened from its
  // `handle` (once, and again when the rank's handle changes).
  char* peer(int rank, const IpcHandle& handle);

 private:
  struct Opened {
    IpcHandle handle;
    std::unique_ptr<PeerBuffer> buffer;
  };
  void release();

  int device_ = -1;
  char* scratch_ = nullptr;
  IpcHandle handle_;
  std::map<int, Opened> peers_;
};

}  // namespace comm::cuda
