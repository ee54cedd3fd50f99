#include "core/call_memory.h"

#include "common/error.h"
#include "cuda/device.h"

namespace comm::core {

namespace {

std::string where(comm_memory_type_t memory, int device) {
  return memory == COMM_MEMORY_CUDA ? fmt::format("the memory of CUDA device {}", device) : "host memory";
}

}  // namespace

void CallMemory::add(const comm_tensor& t, const char* name, uint8_t use) {
  if (first_.empty()) {
    first_ = name;
    memory_ = t.memory;
    if (t.memory == COMM_MEMORY_CUDA) {
      device_ = t.device;
      staging_ = std::make_shared<cuda::Staging>(device_);
    }
  } else if (t.memory != memory_ || (t.memory == COMM_MEMORY_CUDA && t.device != device_)) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is in {} but {} is in {}; the tensors of one call must be in one memory",
         first_, where(memory_, device_), name, where(t.memory, t.device));
  }
  if (t.memory == COMM_MEMORY_CUDA) {
    cuda::checkDeviceBuffer(t.data, t.nbytes(), t.device, name);
    staging_->add(t.data, t.nbytes(), use);
  } else if (t.nbytes() > 0) {
    cuda::checkHostBuffer(t.data, name);
  }
}

void CallMemory::prepare() {
  if (staging_) staging_->prepare();
}

}  // namespace comm::core
