// Reduction kernels: element-wise combination of two arrays of one dtype
// with one op. float16 and bfloat16 are computed in float32 and rounded to
// nearest-even once per combination.
#pragma once

#include <cstddef>

#include "comm.h"

namespace comm::reduce {

// Whether `op` is defined for `dtype`: sum/prod/min/max/avg for every dtype
// (bool: sum = or, prod = and), band/bor/bxor for integer and bool dtypes.
bool supported(comm_dtype_t dtype, comm_op_t op);

// out[i] = op(a[i], b[i]) for i < count. `out` may alias `a` or `b` exactly
// (in place); other overlaps are not allowed. AVG combines like SUM (divide
// once at the end with finishAverage). Callers check supported() first.
void combine(void* out, const void* a, const void* b, size_t count, comm_dtype_t dtype, comm_op_t op);

// data[i] = data[i] / divisor (integers truncate toward zero), for AVG.
void finishAverage(void* data, size_t count, comm_dtype_t dtype, int divisor);

}  // namespace comm::reduce
