// float16 <-> float32 for one vector of lanes with x86 F16C (8 lanes) and
// AVX-512 (16 lanes). Callers must have the same target and check the CPU.
//
// Narrowing rounds to nearest even like Float16::fromFloat; the hardware
// keeps a NaN's payload, so NaN lanes become the float32 quiet NaN first,
// which narrows to Float16::kNaN.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace comm::reduce::x86 {

constexpr int kRoundNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kFloatQuietNaN = 0x7FC00000;

[[gnu::target("avx,f16c"), gnu::always_inline]] inline __m256 widen8(const uint16_t* in) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
}

[[gnu::target("avx,f16c"), gnu::always_inline]] inline void narrow8(__m256 f, uint16_t* out) {
  // A select by and/or: GCC 12 turns _mm256_blendv_ps under plain AVX into a
  // branch per lane.
  __m256 isNaN = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
  __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(kFloatQuietNaN));
  f = _mm256_or_ps(_mm256_andnot_ps(isNaN, f), _mm256_and_ps(isNaN, nan));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(f, kRoundNearestEven));
}

// The unmasked AVX-512 conversions trip a false -Wmaybe-uninitialized in
// GCC 12's own intrinsic headers (GCC PR 105593); all-lanes masks do not.
constexpr __mmask16 kAllLanes = 0xFFFF;

[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 widen16(const uint16_t* in) {
  return _mm512_maskz_cvtph_ps(kAllLanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
}

[[gnu::target("avx512f"), gnu::always_inline]] inline void narrow16(__m512 f, uint16_t* out) {
  __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32(kFloatQuietNaN));
  f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), nan);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_maskz_cvtps_ph(kAllLanes, f, kRoundNearestEven));
}

}  // namespace comm::reduce::x86
