// comm's own reduction kernels on the device: the element-wise combination
// of reduce/reduce.h, with the same results for every dtype and op (float16
// and bfloat16 computed in float32 and rounded to nearest-even, canonical
// NaNs, wrapping integers, NaN-propagating min/max with -0 below +0, bool as
// logic), run on a CUDA stream. No host round trip. Bit for bit the host's
// results, except which NaN a float32/float64 sum, product or average
// gives (the GPU's arithmetic makes its own canonical NaN, as x86's makes
// its own).
#pragma once

#include <cstddef>

#include "comm.h"

namespace comm::cuda {

// Enqueue out[i] = op(a[i], b[i]) for i < count on `stream` (a
// cudaStream_t; the pointers are device memory of the current device). AVG
// combines like SUM; finish with finishAverageOnDevice. `out` may alias `a`
// or `b` exactly. Throws COMM_ERR_INVALID_ARGUMENT for a pair reduce/ does
// not support, comm::Error for a launch the runtime refuses.
void combineOnDevice(void* out, const void* a, const void* b, size_t count, comm_dtype_t dtype, comm_op_t op,
                     void* stream);

// Enqueue data[i] /= divisor (integers truncate toward zero), as
// reduce::finishAverage does on the host.
void finishAverageOnDevice(void* data, size_t count, comm_dtype_t dtype, int divisor, void* stream);

}  // namespace comm::cuda
