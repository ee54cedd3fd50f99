// finishAverage(): the division that ends an AVG reduction, one kernel per
// dtype in a table like combine's.
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "common/dtype.h"
#include "common/error.h"
#include "reduce/aligned_blocks.h"
#include "reduce/cpu_variants.h"
#include "reduce/half.h"
#include "reduce/reduce.h"

namespace comm::reduce {
namespace {

using AverageFn = void (*)(void* data, size_t count, int divisor);

// Integers of up to 32 bits divide in float64, which vectorises where integer
// division does not, and is exact: a quotient q = x / d that is not an integer
// lies at least 1/d from every integer, while rounding moves it by at most
// 2^-53 * |q| <= 2^-53 * 2^32 / d, so truncating (the conversion back)
// gives the integer quotient.
template <class T>
[[COMM_CPU_CLONES]] void divide(T* __restrict data, size_t count, int divisor) {
  if constexpr (std::is_integral_v<T> && sizeof(T) <= sizeof(uint32_t)) {
    double d = divisor;
    for (size_t i = 0; i < count; ++i) data[i] = T(double(data[i]) / d);
  } else {
    T d = T(divisor);
    for (size_t i = 0; i < count; ++i) data[i] = T(data[i] / d);
  }
}

template <class T>
void divideArray(void* data, size_t count, int divisor) {
  divide(static_cast<T*>(data), count, divisor);
}

template <class Format>
void divideHalfArray(void* data, size_t count, int divisor) {
  constexpr size_t kBlock = 1024;
  float block[kBlock];
  auto* h = static_cast<uint16_t*>(data);
  for (size_t done = 0; done < count; done += kBlock) {
    size_t n = std::min(kBlock, count - done);
    Format::widen(h + done, block, n);
    divide(block, n, divisor);
    Format::narrow(block, h + done, n);
  }
}

// In comm_dtype_t order; bool has no average (the mean of bools is no bool).
constexpr std::array<AverageFn, COMM_BOOL + 1> kAverage = {divideArray<int8_t>,
                                                           divideArray<uint8_t>,
                                                           divideArray<int16_t>,
                                                           divideArray<uint16_t>,
                                                           divideArray<int32_t>,
                                                           divideArray<uint32_t>,
                                                           divideArray<int64_t>,
                                                           divideArray<uint64_t>,
                                                           divideHalfArray<Float16>,
                                                           divideHalfArray<BFloat16>,
                                                           divideArray<float>,
                                                           divideArray<double>,
                                                           nullptr};

}  // namespace

void finishAverage(void* data, size_t count, comm_dtype_t dtype, int divisor) {
  if (static_cast<size_t>(dtype) >= kAverage.size()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "reduce::finishAverage: unknown dtype {}", int(dtype));
  }
  if (kAverage[dtype] == nullptr) {
    fail(COMM_ERR_NOT_SUPPORTED, "reduce::finishAverage: avg is not defined for dtype {}", dtypeName(dtype));
  }
  if (divisor <= 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "reduce::finishAverage: divisor {} for {} is not positive", divisor,
         dtypeName(dtype));
  }
  const AverageFn divideAll = kAverage[dtype];
  const size_t elementSize = dtypeSize(dtype);
  if (alignedTo(elementSize, {data})) return divideAll(data, count, divisor);
  throughAlignedBlocks<1>(data, {data}, count, elementSize,
                          [&](auto& blocks, size_t elements) { divideAll(blocks[0], elements, divisor); });
}

}  // namespace comm::reduce
