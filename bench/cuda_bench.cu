// comm-cuda-bench: the device yardsticks comm's CUDA path is measured
// against (docs/cuda.md, docs/performance.md), on one GPU: device-to-device
// and pinned host<->device copy bandwidth, a plain c = a + b kernel, and
// comm's own reduction kernels on the same data. One line per figure,
// "name value unit", for scripts/gpu-check.sh to collect.
//   comm-cuda-bench [BYTES] [ITERATIONS]     (default 64 MiB, 20)
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "comm.h"
#include "cuda/reduce_kernels.h"

namespace {

void checkCuda(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "comm-cuda-bench: %s: %s\n", call, cudaGetErrorString(error));
  std::exit(1);
}

// The yardstick: what a simple, well-written element-wise kernel reaches.
__global__ void addFloats(float4* c, const float4* a, const float4* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

// Milliseconds per call of `body` (enqueued on the legacy stream), over
// `iterations` calls after two untimed ones.
template <typename Body>
double timeMs(int iterations, Body body) {
  cudaEvent_t start, stop;
  checkCuda(cudaEventCreate(&start), "cudaEventCreate");
  checkCuda(cudaEventCreate(&stop), "cudaEventCreate");
  body();
  body();
  checkCuda(cudaEventRecord(start, nullptr), "cudaEventRecord");
  for (int i = 0; i < iterations; ++i) body();
  checkCuda(cudaEventRecord(stop, nullptr), "cudaEventRecord");
  checkCuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  checkCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iterations;
}

void report(const char* name, size_t bytesMoved, double ms) {
  std::printf("%-28s %10.1f GB/s   (%.3f ms)\n", name, bytesMoved / (ms * 1e6), ms);
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : size_t{64} << 20;
  int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  int devices = 0;
  const char* reason = "";
  comm_cuda_device_count(&devices, &reason);
  if (devices == 0) {
    std::printf("comm-cuda-bench: SKIPPED: no CUDA device visible: %s\n", reason);
    return 77;
  }
  cudaDeviceProp prop{};
  checkCuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device 0: %s, %zu MiB buffers, %d iterations\n", prop.name, bytes >> 20, iterations);
  void *a, *b, *c, *pinned;
  checkCuda(cudaMalloc(&a, bytes), "cudaMalloc");
  checkCuda(cudaMalloc(&b, bytes), "cudaMalloc");
  checkCuda(cudaMalloc(&c, bytes), "cudaMalloc");
  checkCuda(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  checkCuda(cudaMemset(a, 0, bytes), "cudaMemset");
  checkCuda(cudaMemset(b, 0, bytes), "cudaMemset");

  // Copies count the bytes once (as cudaMemcpy bandwidth is quoted);
  // kernels count what they read and write: 3 x bytes.
  report("memcpy_d2d", bytes, timeMs(iterations, [&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); }));
  report("memcpy_h2d_pinned", bytes,
         timeMs(iterations, [&] { cudaMemcpyAsync(a, pinned, bytes, cudaMemcpyHostToDevice); }));
  report("memcpy_d2h_pinned", bytes,
         timeMs(iterations, [&] { cudaMemcpyAsync(pinned, a, bytes, cudaMemcpyDeviceToHost); }));
  size_t vectors = bytes / sizeof(float4);
  double addMs = timeMs(iterations, [&] {
    addFloats<<<prop.multiProcessorCount * 8, 256>>>(static_cast<float4*>(c), static_cast<const float4*>(a),
                                                     static_cast<const float4*>(b), vectors);
  });
  report("add_kernel_float32", 3 * bytes, addMs);
  for (comm_dtype_t dtype : {COMM_FLOAT32, COMM_BFLOAT16, COMM_FLOAT16, COMM_INT32}) {
    size_t count = bytes / comm_dtype_size(dtype);
    double ms = timeMs(iterations, [&] { comm::cuda::combineOnDevice(c, a, b, count, dtype, COMM_OP_SUM, nullptr); });
    std::string name = std::string("comm_combine_sum_") + comm_dtype_name(dtype);
    report(name.c_str(), 3 * bytes, ms);
    if (dtype == COMM_FLOAT32) std::printf("%-28s %10.2f       (>= 0.80 asked)\n", "ratio_combine_to_add", addMs / ms);
  }
  checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return 0;
}
