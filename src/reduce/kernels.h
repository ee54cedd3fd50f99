// Array loops of the combine kernels, one instantiation per (element type,
// op). Each loop is compiled for AVX-512, AVX2 and baseline x86-64 and picked
// by the CPU once at load time (an ifunc), so the hot loops are plain
// restrict-qualified code that the compiler vectorises.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "reduce/half.h"

namespace comm::reduce {

// out[i] = op(a[i], b[i]); `out` may be `a` or `b` exactly.
using CombineFn = void (*)(void* out, const void* a, const void* b, size_t count);

#define COMM_REDUCE_CLONES gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")

template <class T, class Op>
[[COMM_REDUCE_CLONES]] void combineInPlace(T* __restrict inout, const T* __restrict other, size_t count) {
  for (size_t i = 0; i < count; ++i) inout[i] = Op::apply(inout[i], other[i]);
}

template <class T, class Op>
[[COMM_REDUCE_CLONES]] void combineApart(T* __restrict out, const T* __restrict a, const T* __restrict b,
                                         size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Op::apply(a[i], b[i]);
}

#undef COMM_REDUCE_CLONES

// Aliased calls go to the in-place loop, whose pointers really do not alias
// (restrict on three pointers of which two are equal would be undefined).
// Ops are commutative, so out == b is b = op(b, a).
template <class T, class Op>
void combineArrays(void* out, const void* a, const void* b, size_t count) {
  auto* o = static_cast<T*>(out);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  if (o == x) {
    combineInPlace<T, Op>(o, y, count);
  } else if (o == y) {
    combineInPlace<T, Op>(o, x, count);
  } else {
    combineApart<T, Op>(o, x, y, count);
  }
}

// Float16 and BFloat16 (`Format`): widen a block of each input to float32,
// combine there, narrow back. Blocks are small enough to stay in L1, and a
// block of out is written only after both input blocks were read, so exact
// aliasing is safe.
template <class Format, class Op>
void combineHalfArrays(void* out, const void* a, const void* b, size_t count) {
  constexpr size_t kBlock = 512;
  float x[kBlock];
  float y[kBlock];
  auto* o = static_cast<uint16_t*>(out);
  auto* pa = static_cast<const uint16_t*>(a);
  auto* pb = static_cast<const uint16_t*>(b);
  for (size_t done = 0; done < count; done += kBlock) {
    size_t n = std::min(kBlock, count - done);
    Format::widen(pa + done, x, n);
    Format::widen(pb + done, y, n);
    combineInPlace<float, Op>(x, y, n);
    Format::narrow(x, o + done, n);
  }
}

}  // namespace comm::reduce
