// all_reduce on device memory among ranks that share one GPU (or whose GPUs
// of one node all have peer access to each other), done on the GPUs: each
// rank copies its input into its communicator's device scratch
// (cuda/ipc_workspace.h), which the other ranks have mapped through CUDA
// IPC; rank r reduces slice r of every rank's scratch into its own with
// comm's kernels; every rank then copies the reduced slices from the
// scratches into its output. The copy engines and kernels do the work; the
// host only exchanges the scratch handles and waits at a barrier between
// the phases. Messages larger than the scratch go in chunks of it.
#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::cuda {
class Staging;
}

namespace comm::algo {

using core::CollectiveContext;

// Below this many bytes the staged path's two copies cost about as much
// as this path's three device synchronisations with MPS, and much less
// without it, where every synchronisation may wait for the other
// processes' time slices (docs/performance.md, CUDA device memory).
inline constexpr size_t kDeviceIpcMinBytes = size_t{1} << 20;

// The elements of a chunk of `count` that rank q of n reduces: slices of
// whole kDeviceSliceAlignment-byte multiples (the kernels' vector loads stay
// aligned), in rank order, the last ones shorter or empty. Pure host logic.
inline constexpr size_t kDeviceSliceAlignment = 256;
struct DeviceSlice {
  size_t begin;
  size_t count;
};
DeviceSlice deviceSliceOf(int q, int n, size_t count, size_t elementBytes);

// Runs the all_reduce of device buffers `in` and `out` (of CUDA device
// `device`) this way and returns true when every rank's buffers are on the
// same GPU (or on GPUs of one node that all have peer access to each
// other), no rank's call is ordered on a CUDA stream and no rank has
// COMM_CUDA_IPC=0, which the ranks learn from each other first; returns
// false, with nothing written, otherwise or when the message is smaller
// than kDeviceIpcMinBytes: every rank then returns false, and the caller
// stages through host memory. (Stream-ordered calls stage: on the first GPU
// run, a stream-ordered call with a handle taking this path did not
// complete, for a reason not yet found.) Every rank of the collective must
// have device tensors (the signature says so: Signature::memory). The
// device work runs on `staging`'s stream, after the caller's earlier work.
bool deviceIpcAllReduce(CollectiveContext& ctx, cuda::Staging& staging, int device, bool streamOrdered, const void* in,
                        void* out, size_t count, comm_dtype_t dtype, comm_op_t op);

}  // namespace comm::algo
