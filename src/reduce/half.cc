#include "reduce/half.h"

#include <immintrin.h>

#include <vector>

namespace comm::reduce {
namespace {

void widenScalar(const uint16_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Float16::toFloat(in[i]);
}

void narrowScalar(const float* in, uint16_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Float16::fromFloat(in[i]);
}

// The hardware paths convert whole vectors and leave the tail to the scalar
// code, which rounds identically. Their only fix-up is NaN: the hardware keeps
// the payload, the scalar code and the format contract want kNaN, so NaN
// lanes are replaced by the float32 quiet NaN, which narrows to kNaN.
constexpr int kRoundNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kFloatQuietNaN = 0x7FC00000;

[[gnu::target("avx,f16c")]] void widenF16c(const uint16_t* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  widenScalar(in + i, out + i, count - i);
}

[[gnu::target("avx,f16c")]] void narrowF16c(const float* in, uint16_t* out, size_t count) {
  const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(kFloatQuietNaN));
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256 f = _mm256_loadu_ps(in + i);
    f = _mm256_blendv_ps(f, nan, _mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(f, kRoundNearestEven));
  }
  narrowScalar(in + i, out + i, count - i);
}

// The unmasked AVX-512 conversions trip a false -Wmaybe-uninitialized in
// GCC 12's own intrinsic headers (GCC PR 105593); all-lanes masks do not.
constexpr __mmask16 kAllLanes = 0xFFFF;

[[gnu::target("avx512f")]] void widenAvx512(const uint16_t* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(kAllLanes, h));
  }
  widenScalar(in + i, out + i, count - i);
}

[[gnu::target("avx512f")]] void narrowAvx512(const float* in, uint16_t* out, size_t count) {
  const __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32(kFloatQuietNaN));
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512 f = _mm512_loadu_ps(in + i);
    f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_maskz_cvtps_ph(kAllLanes, f, kRoundNearestEven));
  }
  narrowScalar(in + i, out + i, count - i);
}

std::vector<Float16Converter> availableFloat16Converters() {
  __builtin_cpu_init();  // we may run from a static initializer, before libgcc's own
  std::vector<Float16Converter> converters;
  if (__builtin_cpu_supports("avx512f")) converters.push_back({"avx512f", widenAvx512, narrowAvx512});
  if (__builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c")) {
    converters.push_back({"f16c", widenF16c, narrowF16c});
  }
  converters.push_back({"scalar", widenScalar, narrowScalar});
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

void Float16::narrow(const float* in, uint16_t* out, size_t count) {
  float16Converter().narrow(in, out, count);
}

[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void BFloat16::widen(
    const uint16_t* __restrict in, float* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = toFloat(in[i]);
}

[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void BFloat16::narrow(
    const float* __restrict in, uint16_t* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = fromFloat(in[i]);
}

}  // namespace comm::reduce
