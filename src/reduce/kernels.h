// Array loops of the combine kernels, one instantiation per (element type,
// op). The plain loops are compiled for AVX-512, AVX2 and baseline x86-64 and
// picked by the CPU once at load time (reduce/cpu_variants.h), so the hot loops are
// restrict-qualified code that the compiler vectorises. float16 has loops
// written with F16C / AVX-512 conversions, picked by float16Converter().
#pragma once

#include <cstddef>
#include <cstdint>

#include "reduce/cpu_variants.h"
#include "reduce/half.h"
#include "reduce/half_x86.h"

namespace comm::reduce {

// out[i] = op(a[i], b[i]); `out` may be `a` or `b` exactly.
using CombineFn = void (*)(void* out, const void* a, const void* b, size_t count);

template <class T, class Op>
[[COMM_CPU_CLONES]] void combineInPlace(T* __restrict inout, const T* __restrict other, size_t count) {
  for (size_t i = 0; i < count; ++i) inout[i] = Op::apply(inout[i], other[i]);
}

template <class T, class Op>
[[COMM_CPU_CLONES]] void combineApart(T* __restrict out, const T* __restrict a, const T* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Op::apply(a[i], b[i]);
}

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

// A 16-bit float `Format` op: widen, apply `Op` in float32, round once.
template <class Format, class Op>
struct InFloat32 {
  static uint16_t apply(uint16_t a, uint16_t b) {
    return Format::fromFloat(Op::apply(Format::toFloat(a), Format::toFloat(b)));
  }
};

#if COMM_FLOAT16_INTRINSICS
// float16 with hardware conversion: Op runs on the float32 vectors in
// registers; the tail goes to the portable loop, which rounds identically.
// Each vector of both inputs is loaded before the output vector is stored, so
// exact aliasing is safe.
template <class Op>
[[gnu::target("avx,f16c")]] void combineFloat16F16c(void* out, const void* a, const void* b, size_t count) {
  auto* o = static_cast<uint16_t*>(out);
  auto* x = static_cast<const uint16_t*>(a);
  auto* y = static_cast<const uint16_t*>(b);
  size_t i = 0;
  for (; i + 8 <= count; i += 8) x86::narrow8(Op::apply(x86::widen8(x + i), x86::widen8(y + i)), o + i);
  combineArrays<uint16_t, InFloat32<Float16, Op>>(o + i, x + i, y + i, count - i);
}

template <class Op>
[[gnu::target("avx512f")]] void combineFloat16Avx512(void* out, const void* a, const void* b, size_t count) {
  auto* o = static_cast<uint16_t*>(out);
  auto* x = static_cast<const uint16_t*>(a);
  auto* y = static_cast<const uint16_t*>(b);
  size_t i = 0;
  for (; i + 16 <= count; i += 16) x86::narrow16(Op::apply(x86::widen16(x + i), x86::widen16(y + i)), o + i);
  combineArrays<uint16_t, InFloat32<Float16, Op>>(o + i, x + i, y + i, count - i);
}
#endif

template <class Op>
CombineFn float16Kernel([[maybe_unused]] Float16Isa isa) {
#if COMM_FLOAT16_INTRINSICS
  switch (isa) {
    case Float16Isa::kAvx512: return combineFloat16Avx512<Op>;
    case Float16Isa::kF16c: return combineFloat16F16c<Op>;
    case Float16Isa::kScalar: break;
  }
#endif
  return combineArrays<uint16_t, InFloat32<Float16, Op>>;
}

}  // namespace comm::reduce
