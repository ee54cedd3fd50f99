#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/stream_gate.h"

namespace comm::cuda {

namespace {

// One thread, asleep between looks: the gate costs the device a sliver of
// one SM while closed, and a look at host memory every few microseconds.
__global__ void waitForTicket(const volatile unsigned long long* word, unsigned long long ticket) {
  while (*word < ticket) __nanosleep(4000);
}

}  // namespace

StreamGate::StreamGate() {
  void* word = nullptr;
  check(cudaHostAlloc(&word, sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc (the stream gate's word)");
  word_ = static_cast<uint64_t*>(word);
  __atomic_store_n(word_, 0, __ATOMIC_RELEASE);
}

uint64_t StreamGate::close(void* stream) {
  void* onDevice = nullptr;
  check(cudaHostGetDevicePointer(&onDevice, word_, 0), "cudaHostGetDevicePointer (the stream gate's word)");
  uint64_t ticket = ++next_;
  // A stream memory operation where the driver and device offer one: the
  // stream's front end waits, and no kernel holds an SM (or, on a GPU that
  // several processes share without MPS, their time slices) while the gate
  // is closed. The kernel otherwise.
  using WaitValue = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
  static const auto waitValue = reinterpret_cast<WaitValue>(driverFunction("cuStreamWaitValue64"));
  if (waitValue != nullptr && waitValue(static_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(onDevice), ticket,
                                        CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS) {
    return ticket;
  }
  waitForTicket<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const unsigned long long*>(onDevice),
                                                                ticket);
  check(cudaGetLastError(), "launching the stream gate");
  return ticket;
}

void StreamGate::open(uint64_t ticket) { __atomic_store_n(word_, ticket, __ATOMIC_RELEASE); }

}  // namespace comm::cuda
