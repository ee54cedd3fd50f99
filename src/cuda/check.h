// CUDA runtime errors as comm::Error, for the files of cuda/ that call the
// runtime (the rest of the engine never sees a cudaError_t).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "comm.h"

namespace comm::cuda {

// "35 (cudaErrorInsufficientDriver: CUDA driver version is insufficient ...)".
std::string describe(cudaError_t error);

// Throws comm::Error when a runtime call failed: COMM_ERR_NOT_SUPPORTED
// when the machine cannot do it (no driver, no such device), else
// COMM_ERR_INTERNAL; the message has `what` and the runtime's own words.
void check(cudaError_t error, const char* what);

// Throws comm::Error(status, message). The .cu files report through these
// out-of-line functions (check.cc): nvcc cannot compile the fmt headers
// that common/error.h brings.
[[noreturn]] void raise(comm_status_t status, const std::string& message);

// A CUDA driver API function (`symbol`, e.g. "cuMemGetAddressRange"),
// reached through the runtime's entry-point table so that comm links no
// libcuda (which a machine without a driver lacks); null when the driver
// has none.
void* driverFunction(const char* symbol);

}  // namespace comm::cuda
