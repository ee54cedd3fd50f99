// Reduction kernels: element-wise combination of two arrays of one dtype
// with one op. float16 and bfloat16 are computed in float32 and rounded to
// nearest-even once per combination; every NaN they produce is the canonical
// quiet NaN (0x7E00, 0x7FC0). Integer sum and prod wrap modulo 2^bits.
// Floating min/max propagate NaN and order -0 below +0, so the result does
// not depend on the operand order. bool reads any non-zero byte as true and
// writes 0 or 1.
#pragma once

#include <cstddef>

#include "comm.h"

namespace comm::reduce {

// Whether `op` is defined for `dtype`: sum/prod/min/max for every dtype, avg
// for every dtype but bool, band/bor/bxor for integer and bool dtypes. For
// bool, sum, max and bor are logical or; prod, min and band logical and; bxor
// logical xor.
bool supported(comm_dtype_t dtype, comm_op_t op);

// out[i] = op(a[i], b[i]) for i < count. `out` may alias `a` or `b` exactly
// (in place); other overlaps are not allowed. The buffers need not be
// aligned to the element size (reduce/aligned_blocks.h). AVG combines like SUM (divide
// once at the end with finishAverage). Callers check supported() first; an
// unsupported pair throws NOT_SUPPORTED, an unknown dtype or op
// INVALID_ARGUMENT.
void combine(void* out, const void* a, const void* b, size_t count, comm_dtype_t dtype, comm_op_t op);

// data[i] = data[i] / divisor (integers truncate toward zero), for AVG.
// float16/bfloat16 divide in float32. bool throws NOT_SUPPORTED (it has no
// avg); a divisor <= 0 throws INVALID_ARGUMENT.
void finishAverage(void* data, size_t count, comm_dtype_t dtype, int divisor);

}  // namespace comm::reduce
