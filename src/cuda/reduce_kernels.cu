// One kernel per dtype x op family, instantiated from templates: each thread
// moves 16 bytes per load where every pointer allows it (a grid-stride loop
// over 16-byte vectors, then a scalar tail), and computes in the element
// type, or in float32 for the 16-bit floats.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/check.h"
#include "cuda/reduce_kernels.h"

namespace comm::cuda {
namespace {

// The 16-bit floats travel as raw bits; these convert them exactly as
// reduce/half.h does on the host (round to nearest-even, one canonical quiet NaN).
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

__device__ float widen(Float16 h) { return __half2float(__ushort_as_half(h.bits)); }
__device__ float widen(BFloat16 h) { return __bfloat162float(__ushort_as_bfloat16(h.bits)); }
__device__ Float16 narrow(float f, Float16) {
  return {isnan(f) ? uint16_t(0x7E00) : __half_as_ushort(__float2half_rn(f))};
}
__device__ BFloat16 narrow(float f, BFloat16) {
  return {isnan(f) ? uint16_t(0x7FC0) : __bfloat16_as_ushort(__float2bfloat16_rn(f))};
}

template <class T>
constexpr bool kHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Integer sums and products wrap: computed unsigned, at least as wide as int.
template <class T>
using Wrap = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct Sum {
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) return T(Wrap<T>(a) + Wrap<T>(b));
    else return a + b;
  }
};
struct Prod {
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) return T(Wrap<T>(a) * Wrap<T>(b));
    else return a * b;
  }
};
// Floats as their bits, for min/max's ties.
__device__ uint32_t toBits(float f) { return __float_as_uint(f); }
__device__ uint64_t toBits(double d) { return static_cast<uint64_t>(__double_as_longlong(d)); }
__device__ float fromBits(uint32_t b) { return __uint_as_float(b); }
__device__ double fromBits(uint64_t b) { return __longlong_as_double(static_cast<long long>(b)); }

// As reduce/ops.h: on a tie (equal or unordered) the encodings merge, OR
// for min (-0 from {+0, -0}; a quiet NaN when either is one), AND for max
// on equal values (+0), so the result never depends on the operand order
// and is the host's bit for bit.
template <class T>
__device__ T tie(T a, T b, bool equalMergesWithAnd) {
  auto x = toBits(a), y = toBits(b);
  using Bits = decltype(x);
  constexpr Bits quiet = Bits{1} << (sizeof(T) == 4 ? 22 : 51);
  if (a == b) return fromBits(equalMergesWithAnd ? Bits(x & y) : Bits(x | y));
  return fromBits(Bits(x | y | quiet));
}

struct Min {
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return a < b ? a : (b < a ? b : tie(a, b, false));
    else return b < a ? b : a;
  }
};
struct Max {
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return a > b ? a : (b > a ? b : tie(a, b, true));
    else return a < b ? b : a;
  }
};
struct BitAnd {
  template <class T>
  __device__ static T apply(T a, T b) {
    return T(a & b);
  }
};
struct BitOr {
  template <class T>
  __device__ static T apply(T a, T b) {
    return T(a | b);
  }
};
struct BitXor {
  template <class T>
  __device__ static T apply(T a, T b) {
    return T(a ^ b);
  }
};
// bool: any non-zero byte is true; results are 0 or 1.
struct LogicAnd {
  __device__ static uint8_t apply(uint8_t a, uint8_t b) { return (a != 0) & (b != 0); }
};
struct LogicOr {
  __device__ static uint8_t apply(uint8_t a, uint8_t b) { return (a != 0) | (b != 0); }
};
struct LogicXor {
  __device__ static uint8_t apply(uint8_t a, uint8_t b) { return (a != 0) ^ (b != 0); }
};

template <class Op, class T>
__device__ T combineOne(T a, T b) {
  if constexpr (kHalf<T>) return narrow(Op::apply(widen(a), widen(b)), T{});
  else return Op::apply(a, b);
}

constexpr int kVectorBytes = 16;

template <class T>
struct alignas(kVectorBytes) Vector {
  T element[kVectorBytes / sizeof(T)];
};

template <class Op, class T>
__global__ void combineVectors(Vector<T>* out, const Vector<T>* a, const Vector<T>* b, size_t vectors) {
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < vectors; v += size_t(gridDim.x) * blockDim.x) {
    Vector<T> x = a[v], y = b[v], z;
#pragma unroll
    for (int i = 0; i < kVectorBytes / int(sizeof(T)); ++i) z.element[i] = combineOne<Op>(x.element[i], y.element[i]);
    out[v] = z;
  }
}

template <class Op, class T>
__global__ void combineScalars(T* out, const T* a, const T* b, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    out[i] = combineOne<Op>(a[i], b[i]);
}

// Enough blocks to fill the device several times over, no more: each thread
// loops over its share.
unsigned gridFor(size_t items, unsigned threads) {
  static const unsigned maxBlocks = [] {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) sms = 80;
    return unsigned(sms) * 8;
  }();
  size_t blocks = (items + threads - 1) / threads;
  return unsigned(blocks < maxBlocks ? (blocks > 0 ? blocks : 1) : maxBlocks);
}

template <class Op, class T>
void launchCombine(void* out, const void* a, const void* b, size_t count, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  constexpr size_t kPerVector = kVectorBytes / sizeof(T);
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; };
  size_t vectors = aligned(out) && aligned(a) && aligned(b) ? count / kPerVector : 0;
  if (vectors > 0) {
    combineVectors<Op, T><<<gridFor(vectors, kThreads), kThreads, 0, stream>>>(
        static_cast<Vector<T>*>(out), static_cast<const Vector<T>*>(a), static_cast<const Vector<T>*>(b), vectors);
  }
  size_t done = vectors * kPerVector;
  if (done < count) {
    combineScalars<Op, T><<<gridFor(count - done, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(out) + done, static_cast<const T*>(a) + done, static_cast<const T*>(b) + done, count - done);
  }
  check(cudaGetLastError(), "launching a reduction kernel");
}

using CombineFn = void (*)(void*, const void*, const void*, size_t, cudaStream_t);

// The ops of one numeric dtype, in comm_op_t order (AVG combines like SUM;
// the bitwise ops only where T is an integer).
template <class Op, class T>
constexpr CombineFn integerOnly() {
  if constexpr (std::is_integral_v<T>) return launchCombine<Op, T>;
  else return nullptr;
}

template <class T>
constexpr std::array<CombineFn, COMM_OP_BXOR + 1> numericOps() {
  return {launchCombine<Sum, T>, launchCombine<Prod, T>,   launchCombine<Min, T>,   launchCombine<Max, T>,
          launchCombine<Sum, T>, integerOnly<BitAnd, T>(), integerOnly<BitOr, T>(), integerOnly<BitXor, T>()};
}

// In comm_dtype_t order.
const std::array<std::array<CombineFn, COMM_OP_BXOR + 1>, COMM_BOOL + 1> kCombine = {
    numericOps<int8_t>(),
    numericOps<uint8_t>(),
    numericOps<int16_t>(),
    numericOps<uint16_t>(),
    numericOps<int32_t>(),
    numericOps<uint32_t>(),
    numericOps<int64_t>(),
    numericOps<uint64_t>(),
    numericOps<Float16>(),
    numericOps<BFloat16>(),
    numericOps<float>(),
    numericOps<double>(),
    {launchCombine<LogicOr, uint8_t>, launchCombine<LogicAnd, uint8_t>, launchCombine<LogicAnd, uint8_t>,
     launchCombine<LogicOr, uint8_t>, nullptr, launchCombine<LogicAnd, uint8_t>, launchCombine<LogicOr, uint8_t>,
     launchCombine<LogicXor, uint8_t>},
};

// Integers of up to 32 bits divide in float64, exactly, as the host does
// (reduce/average.cc explains why that truncates correctly).
template <class T>
__global__ void divideKernel(T* data, size_t count, int divisor) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    if constexpr (kHalf<T>) data[i] = narrow(widen(data[i]) / float(divisor), T{});
    else if constexpr (std::is_integral_v<T> && sizeof(T) <= 4) data[i] = T(double(data[i]) / double(divisor));
    else data[i] = T(data[i] / T(divisor));
  }
}

using DivideFn = void (*)(void*, size_t, int, cudaStream_t);

template <class T>
void launchDivide(void* data, size_t count, int divisor, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  divideKernel<T><<<gridFor(count, kThreads), kThreads, 0, stream>>>(static_cast<T*>(data), count, divisor);
  check(cudaGetLastError(), "launching the average kernel");
}

const std::array<DivideFn, COMM_BOOL + 1> kDivide = {launchDivide<int8_t>,
                                                     launchDivide<uint8_t>,
                                                     launchDivide<int16_t>,
                                                     launchDivide<uint16_t>,
                                                     launchDivide<int32_t>,
                                                     launchDivide<uint32_t>,
                                                     launchDivide<int64_t>,
                                                     launchDivide<uint64_t>,
                                                     launchDivide<Float16>,
                                                     launchDivide<BFloat16>,
                                                     launchDivide<float>,
                                                     launchDivide<double>,
                                                     nullptr};

}  // namespace

void combineOnDevice(void* out, const void* a, const void* b, size_t count, comm_dtype_t dtype, comm_op_t op,
                     void* stream) {
  CombineFn fn = dtype >= 0 && dtype <= COMM_BOOL && op >= 0 && op <= COMM_OP_BXOR ? kCombine[dtype][op] : nullptr;
  if (fn == nullptr) {
    raise(COMM_ERR_INVALID_ARGUMENT,
          "no device reduction for op " + std::to_string(op) + " on dtype " + std::to_string(dtype));
  }
  if (count > 0) fn(out, a, b, count, static_cast<cudaStream_t>(stream));
}

void finishAverageOnDevice(void* data, size_t count, comm_dtype_t dtype, int divisor, void* stream) {
  DivideFn fn = dtype >= 0 && dtype <= COMM_BOOL ? kDivide[dtype] : nullptr;
  if (fn == nullptr) raise(COMM_ERR_INVALID_ARGUMENT, "no device average for dtype " + std::to_string(dtype));
  if (divisor <= 0) raise(COMM_ERR_INVALID_ARGUMENT, "average divisor " + std::to_string(divisor) + " <= 0");
  if (count > 0) fn(data, count, divisor, static_cast<cudaStream_t>(stream));
}

}  // namespace comm::cuda
