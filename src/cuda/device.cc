#include "cuda/device.h"

#include <cuda.h>

#include <atomic>

#include "common/error.h"
#include "cuda/check.h"

namespace comm::cuda {

bool built() { return true; }

const DeviceCount& deviceCount() {
  static const DeviceCount answer = [] {
    DeviceCount c;
    cudaError_t error = cudaGetDeviceCount(&c.count);
    if (error != cudaSuccess) {
      cudaGetLastError();
      c.count = 0;
      c.reason = fmt::format("cudaGetDeviceCount returned {}", describe(error));
    } else if (c.count == 0) {
      c.reason = "cudaGetDeviceCount found 0 devices";
    }
    return c;
  }();
  return answer;
}

void checkDevice(int device, const char* call) {
  const DeviceCount& c = deviceCount();
  if (c.count == 0) fail(COMM_ERR_NOT_SUPPORTED, "{}: no CUDA device visible: {}", call, c.reason);
  if (device < 0 || device >= c.count) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{}: CUDA device {} does not exist (devices 0..{} are visible)", call, device,
         c.count - 1);
  }
}

namespace {

cudaPointerAttributes attributesOf(const void* data, const char* name) {
  cudaPointerAttributes a{};
  cudaError_t error = cudaPointerGetAttributes(&a, data);
  if (error != cudaSuccess) {
    cudaGetLastError();
    fail(COMM_ERR_INVALID_ARGUMENT, "{}: cudaPointerGetAttributes({}) failed: {}", name, data, describe(error));
  }
  return a;
}

}  // namespace

void checkDeviceBuffer(const void* data, size_t bytes, int device, const char* name) {
  if (bytes == 0) return;
  cudaPointerAttributes a = attributesOf(data, name);
  if (a.type == cudaMemoryTypeManaged) return;
  if (a.type != cudaMemoryTypeDevice) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is marked as memory of CUDA device {} but {} is {} memory", name, device, data,
         a.type == cudaMemoryTypeHost ? "pinned host" : "host");
  }
  if (a.device != device) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is marked as memory of CUDA device {} but {} is on device {}", name, device,
         data, a.device);
  }
}

namespace {

// Whether this process has a CUDA context on some device. Device memory
// needs one, so without one every pointer is host memory; and asking the
// runtime about a pointer would make a context (hundreds of MiB of device
// memory, and time) in every process that only ever uses host memory.
// Primary contexts only (the runtime's, and so CuPy's and PyTorch's).
// Once one is seen it is taken to stay.
bool contextExists() {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_relaxed)) return true;
  using GetDevice = CUresult (*)(CUdevice*, int);
  using GetState = CUresult (*)(CUdevice, unsigned*, int*);
  static const auto getDevice = reinterpret_cast<GetDevice>(driverFunction("cuDeviceGet"));
  static const auto getState = reinterpret_cast<GetState>(driverFunction("cuDevicePrimaryCtxGetState"));
  if (getDevice == nullptr || getState == nullptr) return true;  // cannot tell: ask about the pointer
  for (int ordinal = 0; ordinal < deviceCount().count; ++ordinal) {
    CUdevice device = 0;
    unsigned flags = 0;
    int active = 0;
    if (getDevice(&device, ordinal) == CUDA_SUCCESS && getState(device, &flags, &active) == CUDA_SUCCESS && active) {
      seen.store(true, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

}  // namespace

void checkHostBuffer(const void* data, const char* name) {
  // Without a device, or before this process made a CUDA context, nothing
  // can be device memory.
  if (data == nullptr || deviceCount().count == 0 || !contextExists()) return;
  cudaPointerAttributes a = attributesOf(data, name);
  if (a.type == cudaMemoryTypeDevice) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "{} is marked as host memory but {} is memory of CUDA device {} (comm_tensor_set_memory says where data "
         "lives)",
         name, data, a.device);
  }
}

int streamDevice(void* stream) {
  int device = -1;
  cudaError_t error = cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &device);
  if (error != cudaSuccess) {
    cudaGetLastError();
    fail(COMM_ERR_INVALID_ARGUMENT, "stream {} is not a CUDA stream this process knows: {}", stream, describe(error));
  }
  return device;
}

DeviceScope::DeviceScope(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ == device) return;
  check(cudaSetDevice(device), "cudaSetDevice");
}

DeviceScope::~DeviceScope() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

}  // namespace comm::cuda
