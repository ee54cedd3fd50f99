// The one entry to comm's device paths: which of them runs a collective of
// independent elements (all_reduce, reduce, broadcast) on device memory.
// In order, the first that takes the call runs it:
// - all_reduce among ranks that share a GPU, or whose GPUs of one node all
//   have peer access to each other, on the GPUs through CUDA IPC
//   (device/ipc_all_reduce.h);
// - a rank alone copies on the device (device/single_rank.h);
// - any other call stages through host memory, in parts when large
//   (device/staged_segments.h).
// The other collectives on device memory are staged whole around their
// host algorithm by the API's launch.
#pragma once

#include <cstddef>
#include <functional>

#include "algo/device/staged_segments.h"
#include "comm.h"
#include "core/collective_context.h"
#include "core/signature.h"

namespace comm::cuda {
class Staging;
}

namespace comm::algo {

// A device call of all_reduce, reduce or broadcast.
struct DeviceCall {
  core::CollectiveKind kind;
  comm_op_t op;            // all_reduce's and reduce's
  cuda::Staging* staging;  // the call's, never null
  int device;              // the CUDA device of its buffers
  bool streamOrdered;      // ordered on the communicator's CUDA stream
  const void* in;          // the device buffers, either null where this rank has none
  void* out;               // (a broadcast's root only sends, the other ranks only receive)
  size_t count;            // elements of dtype
  comm_dtype_t dtype;
};

// Runs `call` on the first device path that takes it; the staged path runs
// `part(range)`, the collective on the host memory standing for that range
// of the buffers, within its part's own Segment. Every rank of the
// collective takes the same path.
void runOnDevice(CollectiveContext& ctx, const DeviceCall& call, const std::function<void(ByteRange range)>& part);

}  // namespace comm::algo
