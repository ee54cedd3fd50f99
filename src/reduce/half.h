// The 16-bit float formats (IEEE binary16 "float16" and bfloat16) and their
// conversion to and from float32, one element at a time and in bulk.
//
// Narrowing rounds to nearest, ties to even, handles subnormals and overflows
// to infinity. Every NaN narrows to one canonical quiet NaN (kNaN), so that
// results are bit-identical whichever path computed them and whichever NaN
// payload the float32 arithmetic kept. Widening is exact; a NaN widens quiet
// with its payload, as x86 F16C does.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace comm::reduce {

struct Float16 {
  static constexpr uint16_t kNaN = 0x7E00;

  static float toFloat(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t magnitude = h & 0x7FFFu;
    if (magnitude >= 0x7C00) {
      uint32_t quiet = magnitude > 0x7C00 ? 0x00400000u : 0;
      return std::bit_cast<float>(sign | 0x7F800000u | quiet | (magnitude & 0x3FFu) << 13);
    }
    if (magnitude >= 0x0400) {  // normal: rebias the exponent from 15 to 127
      return std::bit_cast<float>(sign | ((magnitude << 13) + 0x38000000u));
    }
    // Zero or subnormal: magnitude * 2^-24, exact in float32 and never a
    // float32 subnormal, so flush-to-zero modes cannot touch it.
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(float(magnitude) * 0x1p-24f));
  }

  static uint16_t fromFloat(float f) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    auto sign = uint16_t((bits >> 16) & 0x8000);
    uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return kNaN;
    // 65520 is halfway between the largest float16 (65504) and 2^16; the tie
    // goes to the even neighbour, which is infinity.
    if (magnitude >= 0x477FF000u) return uint16_t(sign | 0x7C00);
    if (magnitude >= 0x38800000u) {  // float16 normal (>= 2^-14)
      uint32_t odd = (magnitude >> 13) & 1;
      return uint16_t(sign | ((magnitude - 0x38000000u + 0xFFFu + odd) >> 13));
    }
    // Below 2^-14 the float16 step is 2^-24, which is also the float32 step
    // in [0.5, 1): adding 0.5 makes the FPU round to nearest even for us.
    float aligned = std::bit_cast<float>(magnitude) + 0.5f;
    return uint16_t(sign | (std::bit_cast<uint32_t>(aligned) - 0x3F000000u));
  }

  // Bulk conversion by float16Converter().
  static void widen(const uint16_t* in, float* out, size_t count);
  static void narrow(const float* in, uint16_t* out, size_t count);
};

struct BFloat16 {
  static constexpr uint16_t kNaN = 0x7FC0;

  static float toFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

  static uint16_t fromFloat(float f) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return kNaN;
    // bfloat16 is the top half of a float32: add just under half of the
    // dropped part's range, plus one if the kept part is odd (tie to even).
    // A carry into the exponent is the right result, up to infinity.
    return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16);
  }

  // Bulk conversion; plain code that the compiler vectorises per ISA.
  static void widen(const uint16_t* in, float* out, size_t count);
  static void narrow(const float* in, uint16_t* out, size_t count);
};

// The instruction sets float16 conversion can use, fastest first.
enum class Float16Isa { kAvx512, kF16c, kScalar };

// One implementation of bulk float16 <-> float32 conversion. All of them give
// bit-identical results.
struct Float16Converter {
  Float16Isa isa;
  const char* name;
  void (*widen)(const uint16_t* in, float* out, size_t count);
  void (*narrow)(const float* in, uint16_t* out, size_t count);
};

// The implementations this CPU can run, fastest first; the last one is the
// portable scalar code.
std::span<const Float16Converter> float16Converters();

// The one Float16::widen/narrow and the float16 combine kernels use: the
// first of float16Converters().
const Float16Converter& float16Converter();

}  // namespace comm::reduce
