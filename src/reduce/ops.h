// Element operations of the reduction kernels: Op::apply(a, b) for one pair
// of elements. Every op here is commutative in value, so a kernel may swap
// its operands (only which NaN payload survives a float sum or product of
// two NaNs can change).
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace comm::reduce {

// Integer sums and products wrap modulo 2^n. They are computed on an unsigned
// type at least as wide as `unsigned`: signed overflow is undefined, and
// uint8/uint16 operands would otherwise be promoted to (signed) int, where
// 65535 * 65535 overflows.
template <std::integral T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Float ops take float32/float64 scalars and GCC vectors of them (__m256,
// __m512), so that one definition serves the scalar code, the vectoriser and
// the hand-written SIMD loops alike.
template <class T>
struct FloatTraits {};

template <std::floating_point T>
struct FloatTraits<T> {
  using Element = T;
  using Bits = std::conditional_t<sizeof(T) == sizeof(uint32_t), uint32_t, uint64_t>;
};

template <class V>
  requires(!std::is_pointer_v<V> && !std::is_array_v<V> && requires(V v) { v[0]; } &&
           std::floating_point<std::remove_cvref_t<decltype(std::declval<V&>()[0])>>)
struct FloatTraits<V> {
  using Element = std::remove_cvref_t<decltype(std::declval<V&>()[0])>;
  using Bits [[gnu::vector_size(sizeof(V))]] = typename FloatTraits<Element>::Bits;
};

template <class T>
concept FloatLike = requires {
  typename FloatTraits<T>::Bits;
};

// The integer (vector) of the same size as T, for bit-level work.
template <FloatLike T>
using FloatBits = typename FloatTraits<T>::Bits;

// The quiet bit of a NaN: the top bit of the fraction.
template <FloatLike T>
constexpr auto kQuietBit = FloatBits<typename FloatTraits<T>::Element>{1}
                           << (std::numeric_limits<typename FloatTraits<T>::Element>::digits - 2);

struct Sum {
  template <std::integral T>
  static T apply(T a, T b) {
    return T(WrapType<T>(a) + WrapType<T>(b));
  }
  template <FloatLike T>
  static T apply(T a, T b) {
    return a + b;
  }
};

struct Prod {
  template <std::integral T>
  static T apply(T a, T b) {
    return T(WrapType<T>(a) * WrapType<T>(b));
  }
  template <FloatLike T>
  static T apply(T a, T b) {
    return a * b;
  }
};

// Floating min/max propagate NaN and order -0 below +0, so that the result
// never depends on the operand order. On a tie (equal or unordered) the
// encodings are merged: an equal pair with OR for min (-0 from {+0, -0}) and
// AND for max (+0); an unordered pair with OR, which gives a NaN whenever
// either operand is one (a NaN's exponent is all ones and its fraction
// non-zero), and the quiet bit keeps a signalling NaN from leaking out.
template <bool kLarger>
struct Extreme {
  template <typename T>
  static auto beats(T a, T b) {
    return kLarger ? b < a : a < b;
  }
  template <std::integral T>
  static T apply(T a, T b) {
    return beats(b, a) ? b : a;
  }
  template <FloatLike T>
  static T apply(T a, T b) {
    FloatBits<T> x = std::bit_cast<FloatBits<T>>(a), y = std::bit_cast<FloatBits<T>>(b);
    T tie = std::bit_cast<T>(a == b ? (kLarger ? x & y : x | y) : (x | y | kQuietBit<T>));
    return beats(a, b) ? a : (beats(b, a) ? b : tie);
  }
};
using Min = Extreme<false>;
using Max = Extreme<true>;

struct BitAnd {
  template <std::integral T>
  static T apply(T a, T b) {
    return T(a & b);
  }
};

struct BitOr {
  template <std::integral T>
  static T apply(T a, T b) {
    return T(a | b);
  }
};

struct BitXor {
  template <std::integral T>
  static T apply(T a, T b) {
    return T(a ^ b);
  }
};

// comm bool is one byte, any non-zero byte is true, and results are 0 or 1.
// The storage type is uint8_t because loading a C++ bool that holds neither 0
// nor 1 is undefined.
struct LogicalAnd {
  static uint8_t apply(uint8_t a, uint8_t b) { return uint8_t((a != 0) & (b != 0)); }
};

struct LogicalOr {
  static uint8_t apply(uint8_t a, uint8_t b) { return uint8_t((a != 0) | (b != 0)); }
};

struct LogicalXor {
  static uint8_t apply(uint8_t a, uint8_t b) { return uint8_t((a != 0) ^ (b != 0)); }
};

}  // namespace comm::reduce
