// The CUDA devices this process sees, and checks of what callers say about
// device memory and streams. Plain C++ types only: the rest of the engine
// includes this whether or not CUDA is built in (cuda_stub.cc answers then).
#pragma once

#include <cstddef>
#include <string>

namespace comm::cuda {

// Whether this build of comm has its CUDA part (nvcc was found at configure time).
bool built();

struct DeviceCount {
  int count = 0;
  // Why there are none, in words, when count is 0 ("cudaGetDeviceCount
  // returned 35 (cudaErrorInsufficientDriver: ...)"); empty otherwise.
  std::string reason;
};

// Asked of the CUDA runtime once per process: devices do not come and go
// while it runs, and the first question costs the runtime's start-up.
const DeviceCount& deviceCount();

// Throws comm::Error naming `call`: COMM_ERR_NOT_SUPPORTED when CUDA is not
// built in or no device is visible (with the runtime's reason),
// COMM_ERR_INVALID_ARGUMENT when `device` is not one of them.
void checkDevice(int device, const char* call);

// Throws COMM_ERR_INVALID_ARGUMENT naming `name` unless [data, data + bytes)
// is memory that device `device` can address as its own: device memory of
// that device, or managed memory (cudaPointerGetAttributes).
void checkDeviceBuffer(const void* data, size_t bytes, int device, const char* name);

// Throws COMM_ERR_INVALID_ARGUMENT naming `name` when `data` is device
// memory: host paths would read it with the CPU and crash. Host memory that
// CUDA does not know, pinned host memory and managed memory pass. Without
// CUDA built in every pointer passes (no device memory can exist).
void checkHostBuffer(const void* data, const char* name);

// The device a cudaStream_t belongs to; throws COMM_ERR_INVALID_ARGUMENT
// when the runtime does not recognise `stream`.
int streamDevice(void* stream);

// Makes `device` current on this thread and puts the previous one back when
// it goes: comm's threads and the caller's thread switch devices without the
// caller noticing.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace comm::cuda
