// The body of the public comm_tensor_t: a dense C-contiguous array description.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm.h"

struct comm_tensor {
  void* data = nullptr;
  comm_dtype_t dtype = COMM_FLOAT32;
  int ndim = 0;
  int64_t shape[COMM_MAX_DIMS] = {};
  comm_memory_type_t memory = COMM_MEMORY_HOST;
  int device = 0;
  int64_t numel = 1;       // product of shape (1 for 0-d)
  size_t elementSize = 4;  // bytes per element of dtype

  size_t nbytes() const { return static_cast<size_t>(numel) * elementSize; }
  // Rows are slices along dim 0; a 0-d tensor is one row of one element.
  int64_t rows() const { return ndim == 0 ? 1 : shape[0]; }
  int64_t rowElements() const {
    int64_t n = 1;
    for (int d = 1; d < ndim; ++d) n *= shape[d];
    return n;
  }
  size_t rowBytes() const { return static_cast<size_t>(rowElements()) * elementSize; }
};
