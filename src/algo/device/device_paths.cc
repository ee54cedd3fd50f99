#include "algo/device/device_paths.h"

#include "algo/device/ipc_all_reduce.h"
#include "algo/device/single_rank.h"
#include "common/dtype.h"
#include "cuda/staging.h"

namespace comm::algo {

void runOnDevice(CollectiveContext& ctx, const DeviceCall& call, const std::function<void(ByteRange range)>& part) {
  cuda::Staging& staging = *call.staging;
  if (call.kind == core::CollectiveKind::kAllReduce &&
      deviceIpcAllReduce(ctx, staging, call.device, call.streamOrdered, call.in, call.out, call.count, call.dtype,
                         call.op)) {
    staging.finishOnDevice();
    return;
  }
  // AVG's division by one at one rank, as the host algorithms divide.
  const bool average = call.kind != core::CollectiveKind::kBroadcast && call.op == COMM_OP_AVG;
  if (deviceSingleRank(ctx, staging, call.device, call.in, call.out, call.count, call.dtype, average)) return;
  const size_t element = dtypeSize(call.dtype);
  runStaged(ctx, staging, call.in, call.out, call.count * element, element, part);
}

}  // namespace comm::algo
