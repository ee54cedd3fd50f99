#include "values.h"

#include <algorithm>

namespace commbench {

bool isFloating(comm_dtype_t dtype) {
  return dtype == COMM_FLOAT16 || dtype == COMM_BFLOAT16 || dtype == COMM_FLOAT32 || dtype == COMM_FLOAT64;
}

bool opDefined(comm_dtype_t dtype, comm_op_t op) {
  if (dtype == COMM_BOOL) return op != COMM_OP_AVG;
  bool bitwise = op == COMM_OP_BAND || op == COMM_OP_BOR || op == COMM_OP_BXOR;
  return !bitwise || !isFloating(dtype);
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
