#include "values.h"

#include <algorithm>
#include <cmath>

namespace commbench {

bool isFloating(comm_dtype_t dtype) {
  return dtype == COMM_FLOAT16 || dtype == COMM_BFLOAT16 || dtype == COMM_FLOAT32 || dtype == COMM_FLOAT64;
}

bool opDefined(comm_dtype_t dtype, comm_op_t op) {
  if (dtype == COMM_BOOL) return op != COMM_OP_AVG;
  bool bitwise = op == COMM_OP_BAND || op == COMM_OP_BOR || op == COMM_OP_BXOR;
  return !bitwise || !isFloating(dtype);
}

double float16ToDouble(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F;
  const int fraction = bits & 0x3FF;
  double magnitude = exponent == 0    ? std::ldexp(fraction, -24)
                     : exponent == 31 ? (fraction == 0 ? INFINITY : NAN)
                                      : std::ldexp(fraction + 1024, exponent - 25);
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

uint16_t float16FromDouble(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7E00;
  if (magnitude == 0 || std::isinf(value)) return sign | (magnitude == 0 ? 0 : 0x7C00);
  int exponent;  // magnitude = m x 2^exponent, m in [0.5, 1)
  std::frexp(magnitude, &exponent);
  // Subnormals count in steps of 2^-24; normals keep 11 significant bits.
  // A significand that rounds up to 2^11 carries into the exponent field.
  const int scale = std::max(exponent - 11, -24);
  const double steps = std::nearbyint(std::ldexp(magnitude, -scale));
  const uint32_t bits = scale == -24 ? static_cast<uint32_t>(steps)
                                     : (static_cast<uint32_t>(scale + 25) << 10) + static_cast<uint32_t>(steps) - 1024;
  return sign | static_cast<uint16_t>(std::min<uint32_t>(bits, 0x7C00));
}

double inputValue(const Workload& workload, int rank, size_t index) {
  auto r = static_cast<size_t>(rank);
  if (!workload.op) {
    double tagged = static_cast<double>((r * 7 + index) % 126 + 1);
    return workload.dtype == COMM_BOOL ? std::fmod(tagged, 2.0) : tagged;
  }
  double small = static_cast<double>((r + index) % 3 + 1);
  if (workload.dtype == COMM_BOOL) return std::fmod(small, 2.0);
  if (*workload.op == COMM_OP_PROD) return index % static_cast<size_t>(workload.ranks) == r ? 2.0 : 1.0;
  return small;
}

double reducedValue(const Workload& workload, size_t index) {
  comm_op_t op = *workload.op;
  bool logical = workload.dtype == COMM_BOOL;
  // bool's sum is logical or, which on 0/1 is max.
  if (logical && op == COMM_OP_SUM) op = COMM_OP_MAX;
  double result = inputValue(workload, 0, index);
  for (int rank = 1; rank < workload.ranks; ++rank) {
    double v = inputValue(workload, rank, index);
    auto bits = [](double x) { return static_cast<uint64_t>(x); };
    switch (op) {
      case COMM_OP_SUM:
      case COMM_OP_AVG: result += v; break;
      case COMM_OP_PROD: result *= v; break;
      case COMM_OP_MIN: result = std::min(result, v); break;
      case COMM_OP_MAX: result = std::max(result, v); break;
      case COMM_OP_BAND: result = static_cast<double>(bits(result) & bits(v)); break;
      case COMM_OP_BOR: result = static_cast<double>(bits(result) | bits(v)); break;
      case COMM_OP_BXOR: result = static_cast<double>(bits(result) ^ bits(v)); break;
    }
  }
  if (op == COMM_OP_AVG) {
    result /= workload.ranks;
    if (!isFloating(workload.dtype)) result = std::trunc(result);
  }
  return result;
}

double tolerance(comm_dtype_t dtype) {
  switch (dtype) {
    case COMM_FLOAT16: return 2.0 / 1024;  // 10-bit mantissa
    case COMM_BFLOAT16: return 2.0 / 128;  // 7-bit mantissa
    case COMM_FLOAT32: return 2e-7;
    case COMM_FLOAT64: return 4e-16;
    default: return 0.0;
  }
}

}  // namespace commbench
