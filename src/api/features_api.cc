// comm_has_feature and comm_providers: what this build of the library, on
// this machine, can do.
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/guard.h"
#include "comm.h"
#include "cuda/device.h"
#include "transport/hybrid_transport.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

extern "C" {

COMM_API comm_status_t comm_has_feature(int* out, comm_feature_t feature) {
  return guard("comm_has_feature", [&] {
    require(out, "out");
    switch (feature) {
      case COMM_FEATURE_CUDA: *out = comm::cuda::built() ? 1 : 0; return;
    }
    fail(COMM_ERR_INVALID_ARGUMENT, "feature {} is not a comm_feature_t this library knows (it is {})",
         static_cast<int>(feature), comm_version_string());
  });
}

COMM_API comm_status_t comm_cuda_device_count(int* out_count, const char** out_reason) {
  return guard("comm_cuda_device_count", [&] {
    require(out_count, "out_count");
    const comm::cuda::DeviceCount& devices = comm::cuda::deviceCount();
    *out_count = devices.count;
    if (out_reason != nullptr) *out_reason = devices.reason.c_str();
  });
}

COMM_API comm_status_t comm_providers(const char** out) {
  return guardOut("comm_providers", out, [&] {
    require(out, "out");
    // Asked once: which providers libfabric offers does not change while the
    // process runs. A failure leaves it to be asked again on the next call.
    static const std::string list = fmt::format("{}", fmt::join(comm::transport::availableProviders(), ","));
    *out = list.c_str();
  });
}

}  // extern "C"
