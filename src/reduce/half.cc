#include "reduce/half.h"

#include <vector>

#include "reduce/cpu_variants.h"
#include "reduce/half_x86.h"

namespace comm::reduce {
namespace {

void widenScalar(const uint16_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Float16::toFloat(in[i]);
}

void narrowScalar(const float* in, uint16_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Float16::fromFloat(in[i]);
}

#if COMM_FLOAT16_INTRINSICS
// The hardware paths convert whole vectors and leave the tail to the scalar
// code, which rounds identically.
[[gnu::target("avx,f16c")]] void widenF16c(const uint16_t* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, x86::widen8(in + i));
  widenScalar(in + i, out + i, count - i);
}

[[gnu::target("avx,f16c")]] void narrowF16c(const float* in, uint16_t* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) x86::narrow8(_mm256_loadu_ps(in + i), out + i);
  narrowScalar(in + i, out + i, count - i);
}

[[gnu::target("avx512f")]] void widenAvx512(const uint16_t* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(out + i, x86::widen16(in + i));
  widenScalar(in + i, out + i, count - i);
}

[[gnu::target("avx512f")]] void narrowAvx512(const float* in, uint16_t* out, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) x86::narrow16(_mm512_loadu_ps(in + i), out + i);
  narrowScalar(in + i, out + i, count - i);
}
#endif

std::vector<Float16Converter> availableFloat16Converters() {
  __builtin_cpu_init();  // we may run from a static initializer, before libgcc's own
  std::vector<Float16Converter> converters;
#if COMM_FLOAT16_INTRINSICS
  if (__builtin_cpu_supports("avx512f"))
    converters.push_back({Float16Isa::kAvx512, "avx512f", widenAvx512, narrowAvx512});
  if (__builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c")) {
    converters.push_back({Float16Isa::kF16c, "f16c", widenF16c, narrowF16c});
  }
#endif
  converters.push_back({Float16Isa::kScalar, "scalar", widenScalar, narrowScalar});
  return converters;
}

}  // namespace

std::span<const Float16Converter> float16Converters() {
  static const std::vector<Float16Converter> converters = availableFloat16Converters();
  return converters;
}

const Float16Converter& float16Converter() {
  static const Float16Converter& chosen = float16Converters().front();
  return chosen;
}

void Float16::widen(const uint16_t* in, float* out, size_t count) { float16Converter().widen(in, out, count); }

void Float16::narrow(const float* in, uint16_t* out, size_t count) { float16Converter().narrow(in, out, count); }

[[COMM_CPU_CLONES]] void BFloat16::widen(const uint16_t* __restrict in, float* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = toFloat(in[i]);
}

[[COMM_CPU_CLONES]] void BFloat16::narrow(const float* __restrict in, uint16_t* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = fromFloat(in[i]);
}

}  // namespace comm::reduce
