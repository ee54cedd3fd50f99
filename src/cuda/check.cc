#include "cuda/check.h"

#include "common/error.h"

namespace comm::cuda {

std::string describe(cudaError_t error) {
  return fmt::format("{} ({}: {})", static_cast<int>(error), cudaGetErrorName(error), cudaGetErrorString(error));
}

void check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  // Clears the error the runtime keeps for cudaGetLastError, so that the
  // caller's next CUDA call does not see comm's failure as its own.
  cudaGetLastError();
  const bool machine = error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice ||
                       error == cudaErrorInvalidDevice || error == cudaErrorNotSupported;
  fail(machine ? COMM_ERR_NOT_SUPPORTED : COMM_ERR_INTERNAL, "{} failed: {}", what, describe(error));
}

void raise(comm_status_t status, const std::string& message) { throw Error(status, message); }

void* driverFunction(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return found == cudaDriverEntryPointSuccess ? fn : nullptr;
}

}  // namespace comm::cuda
