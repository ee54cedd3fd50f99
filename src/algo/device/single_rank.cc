#include "algo/device/single_rank.h"

#include "common/dtype.h"
#include "core/communicator.h"
#include "cuda/device.h"
#include "cuda/reduce_kernels.h"
#include "cuda/staging.h"

namespace comm::algo {

bool deviceSingleRank(CollectiveContext& ctx, cuda::Staging& staging, int device, const void* in, void* out,
                      size_t count, comm_dtype_t dtype, bool average) {
  if (ctx.size() != 1) return false;
  cuda::DeviceScope scope(device);
  const size_t bytes = count * dtypeSize(dtype);
  if (in != nullptr && out != nullptr && in != out && bytes > 0) staging.copyOnDevice(out, in, bytes);
  // Dividing by one changes nothing but NaNs, which it leaves as the host's
  // division does.
  if (average && out != nullptr && count > 0) {
    cuda::finishAverageOnDevice(out, count, dtype, 1, staging.deviceStream());
  }
  staging.awaitDevice(ctx.communicator().deadline(), "the copy of the input to the output on the device");
  staging.finishOnDevice();
  return true;
}

}  // namespace comm::algo
