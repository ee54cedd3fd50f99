#include "cuda/ipc.h"

#include <cuda.h>
#include <unistd.h>

#include <cstring>

#include "common/error.h"
#include "cuda/check.h"
#include "cuda/device.h"

namespace comm::cuda {

namespace {

// The start of the allocation that holds `data`: an IPC handle names a whole
// allocation, so the peer needs the buffer's offset in it. The runtime API
// has no such query; the driver's cuMemGetAddressRange has.
const char* allocationBase(const void* data) {
  using GetRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static const auto getRange = reinterpret_cast<GetRange>(driverFunction("cuMemGetAddressRange"));
  if (getRange == nullptr) fail(COMM_ERR_NOT_SUPPORTED, "the CUDA driver has no cuMemGetAddressRange");
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult result = getRange(&base, &size, reinterpret_cast<CUdeviceptr>(data));
  if (result != CUDA_SUCCESS)
    fail(COMM_ERR_INVALID_ARGUMENT, "cuMemGetAddressRange({}) failed with {}", data, static_cast<int>(result));
  return reinterpret_cast<const char*>(base);
}

}  // namespace

IpcHandle exportBuffer(const void* data, size_t bytes, int device) {
  DeviceScope scope(device);
  const char* base = allocationBase(data);
  cudaIpcMemHandle_t raw;
  static_assert(sizeof raw == IpcHandle::kHandleBytes);
  check(cudaIpcGetMemHandle(&raw, const_cast<char*>(base)), "cudaIpcGetMemHandle");
  IpcHandle h;
  std::memcpy(h.handle.data(), &raw, sizeof raw);
  h.offset = static_cast<uint64_t>(static_cast<const char*>(data) - base);
  h.bytes = bytes;
  h.device = device;
  h.pid = static_cast<int32_t>(getpid());
  return h;
}

PeerBuffer::PeerBuffer(const IpcHandle& handle, int device) : bytes_(handle.bytes), device_(device) {
  if (handle.pid == getpid())
    fail(COMM_ERR_INVALID_ARGUMENT, "a CUDA IPC handle cannot be opened by the process that made it");
  DeviceScope scope(device);
  cudaIpcMemHandle_t raw;
  std::memcpy(&raw, handle.handle.data(), sizeof raw);
  if (cudaError_t error = cudaIpcOpenMemHandle(&base_, raw, cudaIpcMemLazyEnablePeerAccess); error != cudaSuccess) {
    cudaGetLastError();
    base_ = nullptr;
    fail(COMM_ERR_NOT_SUPPORTED,
         "cudaIpcOpenMemHandle of process {}'s device memory failed: {}; processes in containers need a shared IPC "
         "namespace (docker --ipc=host), or COMM_CUDA_IPC=0 stages through host memory instead",
         handle.pid, describe(error));
  }
  data_ = static_cast<char*>(base_) + handle.offset;
}

PeerBuffer::~PeerBuffer() {
  if (base_ == nullptr) return;
  // A destructor cannot report a failure; a mapping left open goes with the
  // process.
  try {
    DeviceScope scope(device_);
    cudaIpcCloseMemHandle(base_);
  } catch (const Error&) {
  }
}

}  // namespace comm::cuda
