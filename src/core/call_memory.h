// Where one call's tensors live: all in host memory, or all in the memory of
// one CUDA device. Device buffers reach comm's host algorithms through a
// cuda::Staging: the algorithm works on host memory that stands for them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/tensor.h"
#include "cuda/staging.h"

namespace comm::core {

class CallMemory {
 public:
  static constexpr uint8_t kIn = cuda::Staging::kIn;
  static constexpr uint8_t kOut = cuda::Staging::kOut;

  // Checks `t` (the argument `name`) against the tensors added before (one
  // memory type, one device: else COMM_ERR_INVALID_ARGUMENT naming both)
  // and its data against its memory type (cuda::checkDeviceBuffer /
  // checkHostBuffer), and records what the call does with its buffer
  // (kIn, kOut or both).
  void add(const comm_tensor& t, const char* name, uint8_t use);

  // The CUDA device of every tensor, or -1 for a host call.
  int device() const { return device_; }

  // After the last add(): host memory for the device buffers. Nothing for a
  // host call.
  void prepare();
  // The address the algorithm uses for `data`: itself for a host call, the
  // host memory standing for it for a device call.
  void* at(const void* data) const { return staging_ ? staging_->host(data) : const_cast<void*>(data); }
  // A device call's staging (null for a host call), shared with the body
  // that runs the call.
  std::shared_ptr<cuda::Staging> staging() const { return staging_; }

 private:
  std::string first_;  // the name of the first tensor added ("" before): names may be temporaries
  comm_memory_type_t memory_ = COMM_MEMORY_HOST;
  int device_ = -1;  // >= 0: every tensor is memory of this CUDA device
  std::shared_ptr<cuda::Staging> staging_;
};

}  // namespace comm::core
