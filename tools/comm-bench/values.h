// The data comm-bench puts into its buffers and the results it expects back,
// for every comm dtype. Values are small integers, so sums, products, minima
// and maxima over up to 42 ranks are exact in every dtype (bfloat16 included)
// and a result can be checked element by element; only averages of floating
// types are compared with a tolerance.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "comm.h"

namespace commbench {

// What one rank contributes: the dtype, the op when the collective reduces,
// and the group size (prod's pattern and avg depend on it).
struct Workload {
  comm_dtype_t dtype;
  std::optional<comm_op_t> op;
  int ranks;
};

// The value rank `rank` puts at element `index` of its input. Copying
// collectives get values that differ between ranks and positions, so a block
// landing in the wrong place is caught; reducing ones get 1..3 (prod: at most
// one 2 per element; bool: 0 or 1) so that results stay exact.
double inputValue(const Workload& workload, int rank, size_t index);

// op over every rank's inputValue(rank, index), as the dtype computes it.
double reducedValue(const Workload& workload, size_t index);

// Whether `dtype` is float16, bfloat16, float32 or float64.
bool isFloating(comm_dtype_t dtype);

// Whether comm defines `op` for `dtype`: bitwise ops need integers or bool;
// avg needs a number (not bool).
bool opDefined(comm_dtype_t dtype, comm_op_t op);

// Relative error accepted when comparing `dtype` results: 0 for integers and
// bool; about two units in the last place for floating types (avg divides).
double tolerance(comm_dtype_t dtype);

// Storage types of the dtypes without a C++ arithmetic type of their own
// (_Float16 is not one: clang 14, which builds the sanitizer checks, lacks it).
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// IEEE binary16 conversions, rounding to nearest even.
double float16ToDouble(uint16_t bits);
uint16_t float16FromDouble(double value);
struct Bool {
  uint8_t value;
};

template <class T>
double toDouble(T element) {
  if constexpr (std::is_same_v<T, Float16>) {
    return float16ToDouble(element.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    uint32_t bits = static_cast<uint32_t>(element.bits) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  } else if constexpr (std::is_same_v<T, Bool>) {
    return element.value != 0 ? 1.0 : 0.0;
  } else {
    return static_cast<double>(element);
  }
}

template <class T>
T fromDouble(double value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16{float16FromDouble(value)};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even; inputs are never NaN
    return BFloat16{static_cast<uint16_t>(bits >> 16)};
  } else if constexpr (std::is_same_v<T, Bool>) {
    return Bool{static_cast<uint8_t>(value != 0.0)};
  } else {
    return static_cast<T>(value);
  }
}

// Calls visitor(T{}) with the storage type of `dtype`. Throws
// std::invalid_argument for an unknown dtype.
template <class Visitor>
decltype(auto) visitDtype(comm_dtype_t dtype, Visitor&& visitor);

// data[i] = value(i) for i < count, converted to `dtype`.
template <class Value>
void fill(void* data, size_t count, comm_dtype_t dtype, Value&& value) {
  visitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* elements = static_cast<T*>(data);
    for (size_t i = 0; i < count; ++i) elements[i] = fromDouble<T>(value(i));
  });
}

// How many of data[0..count) differ from expected(i) beyond tolerance(dtype).
template <class Expected>
int64_t countWrong(const void* data, size_t count, comm_dtype_t dtype, Expected&& expected) {
  double relative = tolerance(dtype);
  return visitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* elements = static_cast<const T*>(data);
    int64_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      double want = expected(i);
      double got = toDouble(elements[i]);
      if (!(std::fabs(got - want) <= relative * std::fmax(1.0, std::fabs(want)))) ++wrong;
    }
    return wrong;
  });
}

template <class Visitor>
decltype(auto) visitDtype(comm_dtype_t dtype, Visitor&& visitor) {
  switch (dtype) {
    case COMM_INT8: return visitor(int8_t{});
    case COMM_UINT8: return visitor(uint8_t{});
    case COMM_INT16: return visitor(int16_t{});
    case COMM_UINT16: return visitor(uint16_t{});
    case COMM_INT32: return visitor(int32_t{});
    case COMM_UINT32: return visitor(uint32_t{});
    case COMM_INT64: return visitor(int64_t{});
    case COMM_UINT64: return visitor(uint64_t{});
    case COMM_FLOAT16: return visitor(Float16{});
    case COMM_BFLOAT16: return visitor(BFloat16{});
    case COMM_FLOAT32: return visitor(float{});
    case COMM_FLOAT64: return visitor(double{});
    case COMM_BOOL: return visitor(Bool{});
  }
  throw std::invalid_argument("unknown comm_dtype_t " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace commbench
