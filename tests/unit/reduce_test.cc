// Reduction kernels (src/reduce) against a scalar reference written here,
// independently of the library: every dtype x op, counts that hit the
// vector tails, exact aliasing, the float16/bfloat16 conversions on hand-picked
// and exhaustive bit patterns, supported() and finishAverage().
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "reduce/cpu_variants.h"
#include "reduce/half.h"
#include "reduce/reduce.h"

// Last: cmocka defines a fail() macro, which would break comm::fail in
// common/error.h, and its header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using comm::reduce::BFloat16;
using comm::reduce::Float16;

constexpr comm_dtype_t kDtypes[] = {COMM_INT8,    COMM_UINT8,   COMM_INT16,  COMM_UINT16,  COMM_INT32,
                                    COMM_UINT32,  COMM_INT64,   COMM_UINT64, COMM_FLOAT16, COMM_BFLOAT16,
                                    COMM_FLOAT32, COMM_FLOAT64, COMM_BOOL};
constexpr comm_op_t kOps[] = {COMM_OP_SUM, COMM_OP_PROD, COMM_OP_MIN, COMM_OP_MAX,
                              COMM_OP_AVG, COMM_OP_BAND, COMM_OP_BOR, COMM_OP_BXOR};
// Tails of every vector width, one and more than one float16 block.
constexpr size_t kCounts[] = {0, 1, 7, 33, 1001, 1537};

bool isFloating(comm_dtype_t d) {
  return d == COMM_FLOAT16 || d == COMM_BFLOAT16 || d == COMM_FLOAT32 || d == COMM_FLOAT64;
}
bool isBitwise(comm_op_t op) { return op == COMM_OP_BAND || op == COMM_OP_BOR || op == COMM_OP_BXOR; }

// ---- 16-bit float formats, from the IEEE definition ----

struct HalfFormat {
  int expBits;
  int mantBits;
  uint16_t nan;  // the canonical NaN the library promises
};
constexpr HalfFormat kF16{5, 10, 0x7E00};
constexpr HalfFormat kBF16{8, 7, 0x7FC0};

int bias(HalfFormat f) { return (1 << (f.expBits - 1)) - 1; }
uint16_t infBits(HalfFormat f) { return uint16_t(((1 << f.expBits) - 1) << f.mantBits); }

double decode(HalfFormat f, uint16_t bits) {
  int e = (bits >> f.mantBits) & ((1 << f.expBits) - 1);
  int m = bits & ((1 << f.mantBits) - 1);
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == (1 << f.expBits) - 1) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, 1 - bias(f) - f.mantBits);
  return sign * std::ldexp(m + (1 << f.mantBits), e - bias(f) - f.mantBits);
}

// Magnitude of a non-negative pattern; the infinity pattern stands for the
// next step above the largest finite value, which is what overflow rounds to.
double magnitude(HalfFormat f, uint16_t bits) {
  return bits == infBits(f) ? std::ldexp(1.0, bias(f) + 1) : decode(f, bits);
}

// Round to nearest, ties to even, by searching the sorted finite values.
uint16_t encode(HalfFormat f, double x) {
  if (std::isnan(x)) return f.nan;
  auto sign = uint16_t(std::signbit(x) ? 0x8000 : 0);
  double v = std::fabs(x);
  uint16_t inf = infBits(f);
  if (v >= magnitude(f, inf)) return uint16_t(sign | inf);
  uint16_t lo = 0, hi = inf;  // magnitude(lo) <= v < magnitude(hi)
  while (hi - lo > 1) {
    auto mid = uint16_t((lo + hi) / 2);
    (magnitude(f, mid) <= v ? lo : hi) = mid;
  }
  double low = magnitude(f, lo), high = magnitude(f, hi);
  double midpoint = (low + high) / 2;  // exact: a few bits more than the format
  uint16_t r = v < midpoint ? lo : v > midpoint ? hi : ((lo & 1) ? hi : lo);
  return uint16_t(sign | r);
}

float toFloat(HalfFormat f, uint16_t bits) { return float(decode(f, bits)); }

// ---- reference element ops on raw bit patterns ----

template <class T>
T load(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <class T>
uint64_t store(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
uint64_t refInteger(comm_op_t op, uint64_t a, uint64_t b) {
  T x = load<T>(a), y = load<T>(b);
  // Wrap-around through 128-bit unsigned arithmetic, truncated to T.
  auto wide = [](T v) { return (unsigned __int128)(uint64_t)(int64_t)v; };
  switch (op) {
    case COMM_OP_SUM:
    case COMM_OP_AVG: return store(T(uint64_t(wide(x) + wide(y))));
    case COMM_OP_PROD: return store(T(uint64_t(wide(x) * wide(y))));
    case COMM_OP_MIN: return store(std::min(x, y));
    case COMM_OP_MAX: return store(std::max(x, y));
    case COMM_OP_BAND: return store(T(x & y));
    case COMM_OP_BOR: return store(T(x | y));
    case COMM_OP_BXOR: return store(T(x ^ y));
  }
  return 0;
}

// min/max with NaN propagation and -0 < +0.
template <class F>
F refFloatOp(comm_op_t op, F x, F y) {
  F nan = std::numeric_limits<F>::quiet_NaN();
  switch (op) {
    case COMM_OP_SUM:
    case COMM_OP_AVG: return x + y;
    case COMM_OP_PROD: return x * y;
    case COMM_OP_MIN:
      if (std::isnan(x) || std::isnan(y)) return nan;
      if (x == y) return std::signbit(x) ? x : y;
      return x < y ? x : y;
    case COMM_OP_MAX:
      if (std::isnan(x) || std::isnan(y)) return nan;
      if (x == y) return std::signbit(x) ? y : x;
      return x > y ? x : y;
    default: return nan;
  }
}

uint64_t refBool(comm_op_t op, uint64_t a, uint64_t b) {
  bool x = (a & 0xFF) != 0, y = (b & 0xFF) != 0;
  switch (op) {
    case COMM_OP_PROD:
    case COMM_OP_MIN:
    case COMM_OP_BAND: return x && y;
    case COMM_OP_BXOR: return x != y;
    default: return x || y;
  }
}

uint64_t reference(comm_dtype_t d, comm_op_t op, uint64_t a, uint64_t b) {
  switch (d) {
    case COMM_INT8: return refInteger<int8_t>(op, a, b);
    case COMM_UINT8: return refInteger<uint8_t>(op, a, b);
    case COMM_INT16: return refInteger<int16_t>(op, a, b);
    case COMM_UINT16: return refInteger<uint16_t>(op, a, b);
    case COMM_INT32: return refInteger<int32_t>(op, a, b);
    case COMM_UINT32: return refInteger<uint32_t>(op, a, b);
    case COMM_INT64: return refInteger<int64_t>(op, a, b);
    case COMM_UINT64: return refInteger<uint64_t>(op, a, b);
    case COMM_FLOAT16: return encode(kF16, refFloatOp(op, toFloat(kF16, uint16_t(a)), toFloat(kF16, uint16_t(b))));
    case COMM_BFLOAT16: return encode(kBF16, refFloatOp(op, toFloat(kBF16, uint16_t(a)), toFloat(kBF16, uint16_t(b))));
    case COMM_FLOAT32: return store(refFloatOp(op, load<float>(a), load<float>(b)));
    case COMM_FLOAT64: return store(refFloatOp(op, load<double>(a), load<double>(b)));
    case COMM_BOOL: return refBool(op, a, b);
  }
  return 0;
}

// float32/float64 NaN payloads are the hardware's business; any NaN matches.
bool sameElement(comm_dtype_t d, uint64_t expected, uint64_t actual) {
  if (d == COMM_FLOAT32 && std::isnan(load<float>(expected))) return std::isnan(load<float>(actual));
  if (d == COMM_FLOAT64 && std::isnan(load<double>(expected))) return std::isnan(load<double>(actual));
  return expected == actual;
}

// ---- test data ----

// Operand pairs that matter for rounding, signed zeros, subnormals, overflow
// and NaN, each also tried in the other order.
std::vector<std::pair<uint64_t, uint64_t>> specialPairs(comm_dtype_t d) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  switch (d) {
    case COMM_FLOAT16:
      pairs = {
          {0x0000, 0x8000}, {0x8000, 0x8000}, {0x0001, 0x0001},  // +-0, subnormal + subnormal
          {0x03FF, 0x0001},                                      // largest subnormal + step = smallest normal
          {0x0001, 0x3800}, {0x0003, 0x3800},                    // x 0.5: ties below the smallest step
          {0x0200, 0x0200},                                      // 2^-15 * 2^-15 underflows to 0
          {0x3C00, 0x1000}, {0x3C01, 0x1000},                    // 1 + 2^-11 ties to even, down and up
          {0x3C00, 0x0C00},                                      // 1 + 2^-12: below the tie
          {0x7BFF, 0x4C00}, {0x7BFF, 0x4800},                    // 65504 + 16 ties to inf, + 8 does not
          {0x7BFF, 0x7BFF}, {0x7BFF, 0x4000},                    // overflow by sum and by product
          {0x7C00, 0xFC00}, {0x7C00, 0x3C00}, {0x7C00, 0x0000},  // inf - inf, inf + 1, inf * 0
          {0x7E00, 0x3C00}, {0x7C01, 0x0000}, {0xFE00, 0x7C00},  // quiet, signalling, negative NaN
          {0x7D55, 0xFE01}, {0x0400, 0x8001}, {0xBC00, 0x3C00},  // two NaNs; normal - subnormal; -1 + 1
      };
      break;
    case COMM_BFLOAT16:
      pairs = {
          {0x0000, 0x8000}, {0x8000, 0x8000}, {0x0001, 0x0001},  // +-0, subnormal + subnormal
          {0x007F, 0x0001},                                      // largest subnormal + step
          {0x3F80, 0x3B80}, {0x3F81, 0x3B80},                    // 1 + 2^-8 ties to even, down and up
          {0x7F7F, 0x7F7F}, {0x7F7F, 0x7B00}, {0x7F7F, 0x7A80},  // overflow; max + half step ties to inf
          {0x0080, 0x3F00},                                      // smallest normal x 0.5 -> subnormal
          {0x7F80, 0xFF80}, {0x7F80, 0x0000}, {0x7FC0, 0x3F80},  // inf - inf, inf * 0, NaN
          {0x7F81, 0x0000}, {0xFFC1, 0x7F80}, {0x7FA0, 0xFFC0},  // signalling, negative NaN, two NaNs
      };
      break;
    case COMM_FLOAT32:
      pairs = {
          {0x00000000, 0x80000000}, {0x80000000, 0x80000000}, {0x00000001, 0x00000001},
          {0x7F7FFFFF, 0x7F7FFFFF}, {0x7F800000, 0xFF800000}, {0x7FC00000, 0x3F800000},
          {0x7F800001, 0x3F800000}, {0xFFC00001, 0x7FC00002}, {0x3F800000, 0x33800000},
      };
      break;
    case COMM_FLOAT64:
      pairs = {
          {0x0000000000000000, 0x8000000000000000}, {0x8000000000000000, 0x8000000000000000},
          {0x0000000000000001, 0x0000000000000001}, {0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF},
          {0x7FF0000000000000, 0xFFF0000000000000}, {0x7FF8000000000000, 0x3FF0000000000000},
          {0x7FF0000000000001, 0x3FF0000000000000}, {0xFFF8000000000001, 0x7FF8000000000002},
      };
      break;
    case COMM_BOOL: pairs = {{0, 0}, {0, 1}, {1, 1}, {2, 0}, {0x80, 0xFF}, {0xFE, 0x01}}; break;
    default: {
      // Integers: 0, 1, -1 (all ones), the top bit alone (MIN / 2^(n-1)), all
      // but the top bit (MAX), 2 and an alternating pattern, every pair.
      uint64_t mask = comm_dtype_size(d) == 8 ? ~0ull : (1ull << (8 * comm_dtype_size(d))) - 1;
      uint64_t top = (mask >> 1) + 1;
      const uint64_t values[] = {0, 1, mask, top, mask >> 1, 2, 0x5555555555555555ull & mask};
      for (uint64_t x : values) {
        for (uint64_t y : values) pairs.emplace_back(x, y);
      }
    }
  }
  size_t n = pairs.size();
  for (size_t i = 0; i < n; ++i) pairs.emplace_back(pairs[i].second, pairs[i].first);
  return pairs;
}

struct Buffer {
  size_t elemSize;
  std::vector<uint8_t> bytes;
  Buffer(size_t size, size_t count) : elemSize(size), bytes(size * (count + 1)) {}
  uint64_t get(size_t i, size_t offset = 0) const {
    uint64_t v = 0;
    std::memcpy(&v, &bytes[(i + offset) * elemSize], elemSize);
    return v;
  }
  void set(size_t i, uint64_t v) { std::memcpy(&bytes[i * elemSize], &v, elemSize); }
  uint8_t* at(size_t offset) { return bytes.data() + offset * elemSize; }
};

// Special pairs first, then random bit patterns (every class of value occurs).
std::pair<Buffer, Buffer> operands(comm_dtype_t d, size_t count, std::mt19937_64& rng) {
  size_t size = comm_dtype_size(d);
  Buffer a(size, count), b(size, count);
  auto special = specialPairs(d);
  for (size_t i = 0; i < count; ++i) {
    if (i < special.size()) {
      a.set(i, special[i].first);
      b.set(i, special[i].second);
    } else {
      a.set(i, rng());
      b.set(i, rng());
    }
  }
  return {std::move(a), std::move(b)};
}

std::string describe(comm_dtype_t d, comm_op_t op, size_t count, const char* mode, size_t i, uint64_t a, uint64_t b,
                     uint64_t expected, uint64_t actual) {
  char line[256];
  std::snprintf(line, sizeof(line), "%s %s count %zu (%s) element %zu: op(0x%llx, 0x%llx) = 0x%llx, expected 0x%llx",
                comm_dtype_name(d), comm_op_name(op), count, mode, i, (unsigned long long)a, (unsigned long long)b,
                (unsigned long long)actual, (unsigned long long)expected);
  return line;
}

// Runs combine in every aliasing arrangement, and once with every pointer
// one element off its allocation's alignment, against the reference.
void checkCombine(comm_dtype_t d, comm_op_t op, size_t count, std::mt19937_64& rng) {
  auto [a, b] = operands(d, count, rng);
  std::vector<uint64_t> expected(count);
  for (size_t i = 0; i < count; ++i) expected[i] = reference(d, op, a.get(i), b.get(i));

  enum Mode { kApart, kOutIsA, kOutIsB, kMisaligned };
  const char* names[] = {"out apart", "out == a", "out == b", "misaligned"};
  for (Mode mode : {kApart, kOutIsA, kOutIsB, kMisaligned}) {
    Buffer x = a, y = b, out(a.elemSize, count);
    size_t offset = 0;
    if (mode == kMisaligned) {  // shift the operands up by one element
      offset = 1;
      for (size_t i = count; i-- > 0;) {
        x.set(i + 1, a.get(i));
        y.set(i + 1, b.get(i));
      }
    }
    void* target = mode == kOutIsA ? x.at(0) : mode == kOutIsB ? y.at(0) : out.at(offset);
    comm::reduce::combine(target, x.at(offset), y.at(offset), count, d, op);
    const Buffer& result = mode == kOutIsA ? x : mode == kOutIsB ? y : out;
    for (size_t i = 0; i < count; ++i) {
      uint64_t actual = result.get(i, offset);
      if (!sameElement(d, expected[i], actual)) {
        fail_msg("%s", describe(d, op, count, names[mode], i, a.get(i), b.get(i), expected[i], actual).c_str());
      }
    }
  }
}

// ---- tests ----

void testSupportedTable(void**) {
  // Rows in dtype order; columns sum prod min max avg band bor bxor.
  const char* table[] = {
      "11111111", "11111111", "11111111", "11111111", "11111111", "11111111", "11111111",
      "11111111",                                                  // integers
      "11111000", "11111000", "11111000", "11111000", "11110111",  // float16, bfloat16, float32, float64, bool
  };
  for (comm_dtype_t d : kDtypes) {
    for (comm_op_t op : kOps) {
      bool expected = table[d][op] == '1';
      if (comm::reduce::supported(d, op) != expected) {
        fail_msg("supported(%s, %s) should be %d", comm_dtype_name(d), comm_op_name(op), expected);
      }
      assert_int_equal(expected, (!isFloating(d) || !isBitwise(op)) && !(d == COMM_BOOL && op == COMM_OP_AVG));
    }
  }
  assert_false(comm::reduce::supported(COMM_FLOAT32, COMM_OP_BXOR));
  assert_false(comm::reduce::supported(static_cast<comm_dtype_t>(13), COMM_OP_SUM));
  assert_false(comm::reduce::supported(static_cast<comm_dtype_t>(-1), COMM_OP_SUM));
  assert_false(comm::reduce::supported(COMM_INT32, static_cast<comm_op_t>(8)));
  assert_false(comm::reduce::supported(COMM_INT32, static_cast<comm_op_t>(-1)));
}

void testCombineEveryDtypeAndOp(void**) {
  std::mt19937_64 rng(20261202);
  for (comm_dtype_t d : kDtypes) {
    for (comm_op_t op : kOps) {
      if (!comm::reduce::supported(d, op)) continue;
      for (size_t count : kCounts) checkCombine(d, op, count, rng);
    }
  }
}

// Operands at an odd byte address (a numpy view at an odd offset), in place
// and apart, give what aligned ones give: the kernels never read them as
// typed arrays (UBSan's alignment check in the sanitized build).
void testOddAddresses(void**) {
  std::mt19937_64 rng(20261204);
  constexpr size_t kCount = 1537;  // several of the kernels' aligned blocks, and a tail
  for (comm_dtype_t d : kDtypes) {
    for (comm_op_t op : kOps) {
      if (!comm::reduce::supported(d, op)) continue;
      auto [a, b] = operands(d, kCount, rng);
      const size_t bytes = kCount * a.elemSize;
      Buffer aligned(a.elemSize, kCount);
      comm::reduce::combine(aligned.at(0), a.at(0), b.at(0), kCount, d, op);
      std::vector<uint8_t> x(bytes + 1), y(bytes + 1), out(bytes + 1);
      std::memcpy(x.data() + 1, a.at(0), bytes);
      std::memcpy(y.data() + 1, b.at(0), bytes);
      comm::reduce::combine(out.data() + 1, x.data() + 1, y.data() + 1, kCount, d, op);
      comm::reduce::combine(x.data() + 1, x.data() + 1, y.data() + 1, kCount, d, op);
      assert_memory_equal(out.data() + 1, aligned.at(0), bytes);
      assert_memory_equal(x.data() + 1, aligned.at(0), bytes);
      if (op != COMM_OP_AVG) continue;
      comm::reduce::finishAverage(aligned.at(0), kCount, d, 3);
      comm::reduce::finishAverage(out.data() + 1, kCount, d, 3);
      assert_memory_equal(out.data() + 1, aligned.at(0), bytes);
    }
  }
}

// Hand-checked results, so the reference itself is pinned to known answers.
void testKnownResults(void**) {
  auto one = [](comm_dtype_t d, comm_op_t op, uint64_t a, uint64_t b) {
    uint64_t out = 0;
    comm::reduce::combine(&out, &a, &b, 1, d, op);
    return out;
  };
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x3C00, 0x1000), 0x3C00);  // tie to even, down
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x3C01, 0x1000), 0x3C02);  // tie to even, up
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x7BFF, 0x4C00), 0x7C00);  // 65520 -> inf
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x7BFF, 0x4800), 0x7BFF);
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_PROD, 0x0003, 0x3800), 0x0002);  // 1.5 steps -> 2
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_PROD, 0x0001, 0x3800), 0x0000);  // 0.5 step -> 0
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x03FF, 0x0001), 0x0400);
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_SUM, 0x7C00, 0xFC00), 0x7E00);  // canonical NaN
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_MIN, 0xFE01, 0x3C00), 0x7E00);
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_MIN, 0x0000, 0x8000), 0x8000);
  assert_int_equal(one(COMM_FLOAT16, COMM_OP_MAX, 0x8000, 0x0000), 0x0000);
  assert_int_equal(one(COMM_BFLOAT16, COMM_OP_SUM, 0x3F80, 0x3B80), 0x3F80);
  assert_int_equal(one(COMM_BFLOAT16, COMM_OP_SUM, 0x3F81, 0x3B80), 0x3F82);
  assert_int_equal(one(COMM_BFLOAT16, COMM_OP_SUM, 0x7F7F, 0x7B00), 0x7F80);
  assert_int_equal(one(COMM_BFLOAT16, COMM_OP_MAX, 0x7F81, 0x3F80), 0x7FC0);
  assert_int_equal(one(COMM_FLOAT32, COMM_OP_MIN, 0x00000000, 0x80000000), 0x80000000);
  assert_int_equal(one(COMM_FLOAT32, COMM_OP_MIN, 0x80000000, 0x00000000), 0x80000000);
  assert_int_equal(one(COMM_FLOAT32, COMM_OP_MAX, 0x80000000, 0x00000000), 0x00000000);
  assert_true(std::isnan(load<float>(one(COMM_FLOAT32, COMM_OP_MAX, 0x3F800000, 0x7FC00000))));
  assert_true(std::isnan(load<double>(one(COMM_FLOAT64, COMM_OP_MIN, 0x7FF8000000000000, 0x3FF0000000000000))));
  assert_int_equal(one(COMM_INT8, COMM_OP_SUM, 0x7F, 0x01), 0x80);                      // 127 + 1 wraps to -128
  assert_int_equal(one(COMM_UINT16, COMM_OP_PROD, 0xFFFF, 0xFFFF), 0x0001);             // (2^16-1)^2 mod 2^16
  assert_int_equal(one(COMM_INT32, COMM_OP_PROD, 0x80000000, 0xFFFFFFFF), 0x80000000);  // MIN * -1
  assert_int_equal(one(COMM_INT64, COMM_OP_MIN, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF), 0x8000000000000000);
  assert_int_equal(one(COMM_UINT64, COMM_OP_MIN, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF), 0x7FFFFFFFFFFFFFFF);
  assert_int_equal(one(COMM_BOOL, COMM_OP_SUM, 0x02, 0x00), 1);
  assert_int_equal(one(COMM_BOOL, COMM_OP_PROD, 0x02, 0x80), 1);
  assert_int_equal(one(COMM_BOOL, COMM_OP_BXOR, 0x02, 0x80), 0);
}

void testCombineRejects(void**) {
  float x = 1, y = 2;
  auto status = [&](comm_dtype_t d, comm_op_t op) {
    try {
      comm::reduce::combine(&x, &x, &y, 1, d, op);
    } catch (const comm::Error& e) {
      return e.status();
    }
    return COMM_OK;
  };
  assert_int_equal(status(COMM_FLOAT32, COMM_OP_BXOR), COMM_ERR_NOT_SUPPORTED);
  assert_int_equal(status(COMM_BFLOAT16, COMM_OP_BAND), COMM_ERR_NOT_SUPPORTED);
  assert_int_equal(status(COMM_BOOL, COMM_OP_AVG), COMM_ERR_NOT_SUPPORTED);
  assert_int_equal(status(static_cast<comm_dtype_t>(13), COMM_OP_SUM), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(status(COMM_FLOAT32, static_cast<comm_op_t>(8)), COMM_ERR_INVALID_ARGUMENT);
  assert_true(x == 1.0f);
}

// Every float16 pattern widens exactly on every converter the CPU can run and
// on the scalar element function; counts are odd so every vector path has a
// tail.
void testHalfWidenExhaustive(void**) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  auto expectWidened = [](HalfFormat f, uint16_t h, float actual, const char* who) {
    float want = toFloat(f, h);
    uint32_t bits = std::bit_cast<uint32_t>(actual);
    bool ok;
    if (std::isnan(want)) {  // quiet, same sign, payload in the top fraction bits
      uint32_t payload = uint32_t(h & ((1u << f.mantBits) - 1)) << (23 - f.mantBits);
      uint32_t quiet = f.mantBits == 10 ? 0x00400000u : 0;  // bfloat16 keeps the bits as they are
      ok = bits == (uint32_t(h & 0x8000) << 16 | 0x7F800000u | payload | quiet);
    } else {
      ok = bits == std::bit_cast<uint32_t>(want);
    }
    if (!ok) fail_msg("%s widens 0x%04x to 0x%08x", who, h, bits);
  };
  for (const auto& converter : comm::reduce::float16Converters()) {
    for (size_t offset : {0, 1}) {
      std::vector<float> out(all.size() - offset);
      converter.widen(all.data() + offset, out.data(), out.size());
      for (size_t i = 0; i < out.size(); ++i) expectWidened(kF16, all[i + offset], out[i], converter.name);
    }
  }
  std::vector<float> out(all.size() - 1);
  BFloat16::widen(all.data() + 1, out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i) expectWidened(kBF16, all[i + 1], out[i], "bfloat16 bulk");
  for (uint32_t h = 0; h < 65536; ++h) {
    expectWidened(kF16, uint16_t(h), Float16::toFloat(uint16_t(h)), "float16 scalar");
    expectWidened(kBF16, uint16_t(h), BFloat16::toFloat(uint16_t(h)), "bfloat16 scalar");
  }
}

// Floats that decide rounding: every representable value, every midpoint
// between neighbours and the floats just around it, float32 specials, and
// random patterns.
std::vector<float> narrowingInputs(HalfFormat f) {
  std::vector<float> in;
  uint16_t inf = infBits(f);
  for (uint16_t p = 0; p < inf; ++p) {
    auto low = float(magnitude(f, p));
    auto mid = float((magnitude(f, p) + magnitude(f, uint16_t(p + 1))) / 2);
    for (float v : {low, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      in.push_back(v);
      in.push_back(-v);
    }
  }
  const uint32_t specials[] = {0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001,
                               0x7FC00000, 0xFFFFFFFF, 0x7FA12345, 0x33000000, 0x33000001, 0x477FF000};
  for (uint32_t s : specials) in.push_back(std::bit_cast<float>(s));
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 20); ++i) in.push_back(std::bit_cast<float>(uint32_t(rng())));
  return in;
}

void checkNarrowing(const std::vector<float>& in, const std::vector<uint16_t>& expected,
                    const std::vector<uint16_t>& out, const char* who) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (out[i] != expected[i]) {
      fail_msg("%s narrows 0x%08x to 0x%04x, expected 0x%04x", who, std::bit_cast<uint32_t>(in[i]), out[i],
               expected[i]);
    }
  }
}

void testHalfNarrowing(void**) {
  for (HalfFormat f : {kF16, kBF16}) {
    std::vector<float> in = narrowingInputs(f);
    if (in.size() % 2 == 0) in.push_back(1.0f);  // an odd count: every vector path has a tail
    std::vector<uint16_t> expected(in.size()), out(in.size());
    std::transform(in.begin(), in.end(), expected.begin(), [f](float v) { return encode(f, v); });
    if (f.mantBits == kF16.mantBits) {
      for (const auto& converter : comm::reduce::float16Converters()) {
        converter.narrow(in.data(), out.data(), in.size());
        checkNarrowing(in, expected, out, converter.name);
      }
      std::transform(in.begin(), in.end(), out.begin(), Float16::fromFloat);
      checkNarrowing(in, expected, out, "float16 scalar");
    } else {
      BFloat16::narrow(in.data(), out.data(), in.size());
      checkNarrowing(in, expected, out, "bfloat16 bulk");
      std::transform(in.begin(), in.end(), out.begin(), BFloat16::fromFloat);
      checkNarrowing(in, expected, out, "bfloat16 scalar");
    }
  }
}

void testFloat16ConverterList(void**) {
  auto converters = comm::reduce::float16Converters();
  assert_true(!converters.empty());
  assert_string_equal(converters.back().name, "scalar");
  assert_ptr_equal(&comm::reduce::float16Converter(), &converters.front());
#if COMM_FLOAT16_INTRINSICS
  if (__builtin_cpu_supports("f16c")) assert_true(converters.size() >= 2);
#endif
}

// Reference division for AVG.
uint64_t refAverage(comm_dtype_t d, uint64_t x, int divisor) {
  auto integer = [&]<class T>(T) {
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return store(T(Wide(load<T>(x)) / Wide(divisor)));  // C++ division truncates toward zero
  };
  switch (d) {
    case COMM_INT8: return integer(int8_t{});
    case COMM_UINT8: return integer(uint8_t{});
    case COMM_INT16: return integer(int16_t{});
    case COMM_UINT16: return integer(uint16_t{});
    case COMM_INT32: return integer(int32_t{});
    case COMM_UINT32: return integer(uint32_t{});
    case COMM_INT64: return integer(int64_t{});
    case COMM_UINT64: return integer(uint64_t{});
    case COMM_FLOAT16: return encode(kF16, toFloat(kF16, uint16_t(x)) / float(divisor));
    case COMM_BFLOAT16: return encode(kBF16, toFloat(kBF16, uint16_t(x)) / float(divisor));
    case COMM_FLOAT32: return store(load<float>(x) / float(divisor));
    case COMM_FLOAT64: return store(load<double>(x) / double(divisor));
    case COMM_BOOL: break;  // no avg: testFinishAverage skips it
  }
  return 0;
}

void testFinishAverage(void**) {
  std::mt19937_64 rng(99);
  for (comm_dtype_t d : kDtypes) {
    if (d == COMM_BOOL) continue;
    for (int divisor : {1, 2, 3, 7, 100, 1000, INT_MAX}) {
      for (size_t count : kCounts) {
        auto data = operands(d, count, rng).first;
        Buffer result = data;
        comm::reduce::finishAverage(result.at(0), count, d, divisor);
        for (size_t i = 0; i < count; ++i) {
          uint64_t want = refAverage(d, data.get(i), divisor), got = result.get(i);
          if (!sameElement(d, want, got)) {
            fail_msg("finishAverage %s count %zu element %zu: 0x%llx / %d = 0x%llx, expected 0x%llx",
                     comm_dtype_name(d), count, i, (unsigned long long)data.get(i), divisor, (unsigned long long)got,
                     (unsigned long long)want);
          }
        }
      }
    }
  }
  int32_t ints[] = {-7, 7, INT32_MIN, INT32_MAX, -1};
  comm::reduce::finishAverage(ints, 5, COMM_INT32, 2);
  assert_int_equal(ints[0], -3);
  assert_int_equal(ints[1], 3);
  assert_int_equal(ints[2], INT32_MIN / 2);
  assert_int_equal(ints[3], INT32_MAX / 2);
  assert_int_equal(ints[4], 0);
  int64_t big[] = {INT64_MIN, INT64_MAX};
  comm::reduce::finishAverage(big, 2, COMM_INT64, 7);
  assert_true(big[0] == INT64_MIN / 7 && big[1] == INT64_MAX / 7);
  uint16_t halves[] = {0x4200, 0x0001};  // 3 / 2 = 1.5; smallest subnormal / 2 ties to 0
  comm::reduce::finishAverage(halves, 2, COMM_FLOAT16, 2);
  assert_int_equal(halves[0], 0x3E00);
  assert_int_equal(halves[1], 0x0000);
}

void testFinishAverageRejects(void**) {
  float x = 4;
  for (int divisor : {0, -1}) {
    comm_status_t status = COMM_OK;
    try {
      comm::reduce::finishAverage(&x, 1, COMM_FLOAT32, divisor);
    } catch (const comm::Error& e) {
      status = e.status();
    }
    assert_int_equal(status, COMM_ERR_INVALID_ARGUMENT);
  }
  assert_true(x == 4.0f);
  uint8_t b = 1;
  comm_status_t status = COMM_OK;
  try {
    comm::reduce::finishAverage(&b, 1, COMM_BOOL, 2);
  } catch (const comm::Error& e) {
    status = e.status();
  }
  assert_int_equal(status, COMM_ERR_NOT_SUPPORTED);
  assert_int_equal(b, 1);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(testSupportedTable),         cmocka_unit_test(testKnownResults),
      cmocka_unit_test(testCombineEveryDtypeAndOp), cmocka_unit_test(testCombineRejects),
      cmocka_unit_test(testHalfWidenExhaustive),    cmocka_unit_test(testHalfNarrowing),
      cmocka_unit_test(testFloat16ConverterList),   cmocka_unit_test(testFinishAverage),
      cmocka_unit_test(testFinishAverageRejects),   cmocka_unit_test(testOddAddresses),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
