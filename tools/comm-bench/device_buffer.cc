#include "device_buffer.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace commbench {
namespace {

void checkCuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes, int device) {
  checkCuda(cudaSetDevice(device), "cudaSetDevice");
  void* data = nullptr;
  checkCuda(cudaMalloc(&data, bytes + 4096), "cudaMalloc");
  data_ = static_cast<std::byte*>(data);
  checkCuda(cudaMemset(data_, 0, bytes + 4096), "cudaMemset");
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

void DeviceBuffer::upload(size_t offset, const void* from, size_t bytes) {
  checkCuda(cudaMemcpy(data_ + offset, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (to the device)");
}

void DeviceBuffer::download(void* to, size_t offset, size_t bytes) const {
  checkCuda(cudaMemcpy(to, data_ + offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (to the host)");
}

DeviceStream::DeviceStream(int device) {
  checkCuda(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = stream;
}

DeviceStream::~DeviceStream() { cudaStreamDestroy(static_cast<cudaStream_t>(stream_)); }

void DeviceStream::synchronize() {
  checkCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

}  // namespace commbench
