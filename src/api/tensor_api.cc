// comm_tensor_* : create, destroy, describe tensor descriptors.
#include <deque>
#include <limits>
#include <memory>
#include <mutex>

#include "api/guard.h"
#include "api/objects.h"
#include "common/dtype.h"
#include "core/tensor.h"
#include "cuda/device.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

comm_tensor& liveTensor(comm_tensor* t) { return const_cast<comm_tensor&>(comm::api::tensor(t, "tensor")); }

const comm_tensor& liveTensor(const comm_tensor* t) { return comm::api::tensor(t, "tensor"); }

// Destroyed tensors wait here before their memory is freed, so that a new
// tensor does not get the address of one just destroyed: a second destroy,
// or a use, of the old pointer is then refused instead of reaching the new
// tensor (pointers are the only names tensors have).
constexpr size_t kQuarantine = 1024;
std::mutex quarantineMutex;
std::deque<std::unique_ptr<comm_tensor>> quarantine;

void retire(comm_tensor* t) {
  std::unique_ptr<comm_tensor> oldest;
  std::lock_guard lock(quarantineMutex);
  quarantine.emplace_back(t);
  if (quarantine.size() > kQuarantine) {
    oldest = std::move(quarantine.front());
    quarantine.pop_front();
  }
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_tensor_create(comm_tensor_t** out, void* data, comm_dtype_t dtype, int ndim,
                                          const int64_t* shape) {
  return guardOut("comm_tensor_create", out, [&] {
    require(out, "out");
    if (!comm::validDtype(dtype))
      fail(COMM_ERR_INVALID_ARGUMENT, "dtype {} is not a comm_dtype_t", static_cast<int>(dtype));
    if (ndim < 0 || ndim > COMM_MAX_DIMS)
      fail(COMM_ERR_INVALID_ARGUMENT, "ndim {} is outside 0..{}", ndim, COMM_MAX_DIMS);
    if (ndim > 0) require(shape, "shape");
    auto t = std::make_unique<comm_tensor>();
    t->dtype = dtype;
    t->ndim = ndim;
    t->elementSize = comm::dtypeSize(dtype);
    int64_t numel = 1;
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] < 0) fail(COMM_ERR_INVALID_ARGUMENT, "shape[{}] = {} is negative", d, shape[d]);
      if (shape[d] != 0 && numel > std::numeric_limits<int64_t>::max() / 8 / shape[d]) {
        fail(COMM_ERR_INVALID_ARGUMENT, "shape holds more elements than memory can");
      }
      numel *= shape[d];
      t->shape[d] = shape[d];
    }
    t->numel = numel;
    if (data == nullptr && numel > 0)
      fail(COMM_ERR_INVALID_ARGUMENT, "data is NULL but the shape has {} elements", numel);
    t->data = data;
    comm::api::liveTensors().add(t.get());
    *out = t.release();
  });
}

COMM_API comm_status_t comm_tensor_destroy(comm_tensor_t* tensor) {
  return guard("comm_tensor_destroy", [&] {
    if (tensor == nullptr) return;
    if (!comm::api::liveTensors().remove(tensor)) {
      fail(COMM_ERR_INVALID_USAGE, "tensor {} was destroyed before or never created", static_cast<void*>(tensor));
    }
    retire(tensor);
  });
}

COMM_API comm_status_t comm_tensor_set_data(comm_tensor_t* tensor, void* data) {
  return guard("comm_tensor_set_data", [&] {
    comm_tensor& t = liveTensor(tensor);
    if (data == nullptr && t.numel > 0)
      fail(COMM_ERR_INVALID_ARGUMENT, "data is NULL but the tensor has {} elements", t.numel);
    t.data = data;
  });
}

COMM_API comm_status_t comm_tensor_set_memory(comm_tensor_t* tensor, comm_memory_type_t type, int device) {
  return guard("comm_tensor_set_memory", [&] {
    comm_tensor& t = liveTensor(tensor);
    if (type != COMM_MEMORY_HOST && type != COMM_MEMORY_CUDA)
      fail(COMM_ERR_INVALID_ARGUMENT, "memory type {} is unknown", static_cast<int>(type));
    if (device < 0) fail(COMM_ERR_INVALID_ARGUMENT, "device {} is negative", device);
    // Refused here, where the caller can tell which call was wrong, not in
    // a later collective. The data itself is checked by the calls that use
    // it: comm_tensor_set_data may re-point the descriptor.
    if (type == COMM_MEMORY_CUDA) comm::cuda::checkDevice(device, "CUDA memory");
    t.memory = type;
    t.device = device;
  });
}

COMM_API comm_status_t comm_tensor_data(void** out, const comm_tensor_t* tensor) {
  return guardOut("comm_tensor_data", out, [&] { *require(out, "out") = liveTensor(tensor).data; });
}

COMM_API comm_status_t comm_tensor_dtype(comm_dtype_t* out, const comm_tensor_t* tensor) {
  return guard("comm_tensor_dtype", [&] { *require(out, "out") = liveTensor(tensor).dtype; });
}

COMM_API comm_status_t comm_tensor_ndim(int* out, const comm_tensor_t* tensor) {
  return guard("comm_tensor_ndim", [&] { *require(out, "out") = liveTensor(tensor).ndim; });
}

COMM_API comm_status_t comm_tensor_dim(int64_t* out, const comm_tensor_t* tensor, int dim) {
  return guard("comm_tensor_dim", [&] {
    require(out, "out");
    const comm_tensor& t = liveTensor(tensor);
    if (dim < 0 || dim >= t.ndim)
      fail(COMM_ERR_INVALID_ARGUMENT, "dim {} is outside 0..{} of a {}-d tensor", dim, t.ndim - 1, t.ndim);
    *out = t.shape[dim];
  });
}

COMM_API comm_status_t comm_tensor_numel(int64_t* out, const comm_tensor_t* tensor) {
  return guard("comm_tensor_numel", [&] { *require(out, "out") = liveTensor(tensor).numel; });
}

COMM_API comm_status_t comm_tensor_nbytes(size_t* out, const comm_tensor_t* tensor) {
  return guard("comm_tensor_nbytes", [&] { *require(out, "out") = liveTensor(tensor).nbytes(); });
}

COMM_API comm_status_t comm_tensor_memory(comm_memory_type_t* out_type, int* out_device, const comm_tensor_t* tensor) {
  return guard("comm_tensor_memory", [&] {
    require(out_type, "out_type");
    require(out_device, "out_device");
    const comm_tensor& t = liveTensor(tensor);
    *out_type = t.memory;
    *out_device = t.device;
  });
}

}  // extern "C"
