// comm-reduce-bench: memory bandwidth of the reduction kernels.
//
// For every dtype x op, times combine(a, a, b) (in place, as an allreduce
// step does it) over --size bytes per array and prints GB/s next to memcpy of
// the same bytes and a plain float32 c = a + b loop. GB/s is always 1e9 bytes
// of ONE array per second (count x element size), whatever the kernel reads
// and writes: a combine streams three arrays' worth, memcpy two.
// Each figure is the median of --iters timed runs after one warm-up run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "comm.h"
#include "reduce/half.h"
#include "reduce/reduce.h"

namespace {

constexpr comm_dtype_t kDtypes[] = {COMM_INT8,    COMM_UINT8,   COMM_INT16,  COMM_UINT16,  COMM_INT32,
                                    COMM_UINT32,  COMM_INT64,   COMM_UINT64, COMM_FLOAT16, COMM_BFLOAT16,
                                    COMM_FLOAT32, COMM_FLOAT64, COMM_BOOL};
constexpr comm_op_t kOps[] = {COMM_OP_SUM, COMM_OP_PROD, COMM_OP_MIN, COMM_OP_MAX,
                              COMM_OP_AVG, COMM_OP_BAND, COMM_OP_BOR, COMM_OP_BXOR};

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Array = std::unique_ptr<uint8_t[], FreeDeleter>;

// 2 MiB-aligned (huge-page friendly) and touched, so no run pays page faults.
Array allocate(size_t bytes) {
  constexpr size_t kAlign = 2 << 20;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  Array array(static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded)));
  if (!array) {
    std::fprintf(stderr, "comm-reduce-bench: cannot allocate %zu bytes\n", bytes);
    std::exit(1);
  }
  std::memset(array.get(), 0, rounded);
  return array;
}

// The element "one" of each dtype, so that repeated in-place products stay
// put and sums stay finite and normal (no subnormal slow paths).
void fillOnes(uint8_t* data, size_t bytes, comm_dtype_t dtype) {
  size_t size = comm_dtype_size(dtype);
  uint64_t one = 1;
  if (dtype == COMM_FLOAT16) one = 0x3C00;
  if (dtype == COMM_BFLOAT16) one = 0x3F80;
  if (dtype == COMM_FLOAT32) one = 0x3F800000;
  if (dtype == COMM_FLOAT64) one = 0x3FF0000000000000;
  for (size_t i = 0; i + size <= bytes; i += size) std::memcpy(data + i, &one, size);
}

// A plain float32 c = a + b loop, built for the best ISA like the kernels:
// the yardstick of the project's goal.
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void addFloats(float* __restrict c,
                                                                                     const float* __restrict a,
                                                                                     const float* __restrict b,
                                                                                     size_t count) {
  for (size_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
}

double seconds(const std::function<void()>& run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// GB/s of `bytes` per run, median over `iters` runs after a warm-up.
double bandwidth(size_t bytes, int iters, const std::function<void()>& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) times.push_back(seconds(run));
  return double(bytes) / median(times) / 1e9;
}

// Two kernels timed alternately, so that load from other processes hits both
// alike; returns their GB/s medians.
std::pair<double, double> interleaved(size_t bytes, int iters, const std::function<void()>& first,
                                      const std::function<void()>& second) {
  first();
  second();
  std::vector<double> a, b;
  for (int i = 0; i < iters; ++i) {
    a.push_back(seconds(first));
    b.push_back(seconds(second));
  }
  return {double(bytes) / median(a) / 1e9, double(bytes) / median(b) / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Bandwidth of the comm reduction kernels: combine(a, a, b) per dtype x op vs memcpy"};
  size_t size = 64u << 20;
  int iters = 9;
  app.add_option("--size", size, "bytes per array (default 64 MiB)")->check(CLI::Range(size_t{8}, size_t{1} << 40));
  app.add_option("--iters", iters, "timed runs per figure; the median is reported (default 9)")
      ->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);

  Array a = allocate(size), b = allocate(size), c = allocate(size);
  size_t floats = size / sizeof(float);
  size_t floatBytes = floats * sizeof(float);
  fillOnes(a.get(), size, COMM_FLOAT32);
  fillOnes(b.get(), size, COMM_FLOAT32);
  auto* fa = reinterpret_cast<float*>(a.get());
  auto* fb = reinterpret_cast<float*>(b.get());
  auto* fc = reinterpret_cast<float*>(c.get());

  double memcpyRate = bandwidth(size, iters, [&] { std::memcpy(c.get(), a.get(), size); });
  double addRate = bandwidth(floatBytes, iters, [&] { addFloats(fc, fa, fb, floats); });
  double apartRate =
      bandwidth(floatBytes, iters, [&] { comm::reduce::combine(fc, fa, fb, floats, COMM_FLOAT32, COMM_OP_SUM); });

  std::printf("# comm-reduce-bench: %zu bytes per array, median of %d runs, float16 conversion: %s\n", size, iters,
              comm::reduce::float16Converter().name);
  std::printf("# GB/s = 1e9 bytes of ONE array (count x element size) per second, for every row\n");
  std::printf("# memcpy                         %8.2f GB/s\n", memcpyRate);
  std::printf("# float32 c = a + b (plain loop) %8.2f GB/s\n", addRate);
  std::printf("# float32 combine(c, a, b) sum   %8.2f GB/s  (%.2fx c = a + b)\n", apartRate, apartRate / addRate);
  std::printf("%-9s %-5s %10s %10s %10s\n", "dtype", "op", "GB/s", "/memcpy", "/c=a+b");
  for (comm_dtype_t dtype : kDtypes) {
    size_t count = size / comm_dtype_size(dtype);
    size_t bytes = count * comm_dtype_size(dtype);
    for (comm_op_t op : kOps) {
      if (!comm::reduce::supported(dtype, op)) continue;
      fillOnes(a.get(), size, dtype);
      fillOnes(b.get(), size, dtype);
      double rate =
          bandwidth(bytes, iters, [&] { comm::reduce::combine(a.get(), a.get(), b.get(), count, dtype, op); });
      std::printf("%-9s %-5s %10.2f %10.2f %10.2f\n", comm_dtype_name(dtype), comm_op_name(op), rate, rate / memcpyRate,
                  rate / addRate);
      std::fflush(stdout);
    }
  }

  // The project's goal, measured alternately with its yardstick.
  fillOnes(a.get(), size, COMM_FLOAT32);
  auto [sumRate, yardstick] = interleaved(
      floatBytes, iters, [&] { comm::reduce::combine(fa, fa, fb, floats, COMM_FLOAT32, COMM_OP_SUM); },
      [&] { addFloats(fc, fa, fb, floats); });
  std::printf("# goal: float32 sum in place %.2f GB/s vs c = a + b %.2f GB/s: %.0f%% (target >= 80%%)\n", sumRate,
              yardstick, 100 * sumRate / yardstick);
  return 0;
}
