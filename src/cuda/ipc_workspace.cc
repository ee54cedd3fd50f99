#include "cuda/ipc_workspace.h"

#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <mutex>

#include "common/error.h"
#include "cuda/check.h"
#include "cuda/device.h"

namespace comm::cuda {

DeviceUuid deviceUuid(int device) {
  // Asked of the runtime once per device: the device all_reduce needs it at
  // every call, the query is slow, and a device's UUID never changes.
  static std::mutex mutex;
  static std::map<int, DeviceUuid> known;
  std::lock_guard lock(mutex);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  DeviceUuid uuid;
  static_assert(sizeof properties.uuid.bytes == sizeof uuid);
  std::memcpy(uuid.data(), properties.uuid.bytes, uuid.size());
  known.emplace(device, uuid);
  return uuid;
}

bool canReach(int device, const DeviceUuid& other) {
  if (deviceUuid(device) == other) return true;
  for (int d = 0; d < deviceCount().count; ++d) {
    if (d == device || deviceUuid(d) != other) continue;
    int access = 0;
    check(cudaDeviceCanAccessPeer(&access, device, d), "cudaDeviceCanAccessPeer");
    return access != 0;
  }
  return false;  // a GPU this process does not see
}

IpcWorkspace::~IpcWorkspace() { release(); }

void IpcWorkspace::release() {
  peers_.clear();
  if (scratch_ == nullptr) return;
  // A destructor cannot report a failure; memory not freed goes with the process.
  try {
    DeviceScope scope(device_);
    cudaFree(scratch_);
  } catch (const Error&) {
  }
  scratch_ = nullptr;
}

void IpcWorkspace::prepare(int device) {
  if (scratch_ != nullptr && device_ == device) return;
  release();
  DeviceScope scope(device);
  void* memory = nullptr;
  check(cudaMalloc(&memory, kScratchBytes), "cudaMalloc (the communicator's device scratch)");
  scratch_ = static_cast<char*>(memory);
  device_ = device;
  handle_ = exportBuffer(scratch_, kScratchBytes, device);
}

char* IpcWorkspace::peer(int rank, const IpcHandle& handle) {
  Opened& opened = peers_[rank];
  if (!opened.buffer || !(opened.handle == handle)) {
    opened.buffer.reset();
    opened.buffer = std::make_unique<PeerBuffer>(handle, device_);
    opened.handle = handle;
  }
  return static_cast<char*>(opened.buffer->data());
}

}  // namespace comm::cuda
