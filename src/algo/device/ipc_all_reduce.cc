#include "algo/device/ipc_all_reduce.h"

#include <algorithm>
#include <vector>

#include "common/dtype.h"
#include "core/communicator.h"
#include "cuda/device.h"
#include "cuda/ipc_workspace.h"
#include "cuda/reduce_kernels.h"
#include "cuda/staging.h"

namespace comm::algo {
namespace {

constexpr uint32_t kDescriptorStep = 0;
constexpr uint32_t kReachStep = 1;
constexpr uint32_t kBarrierStep = 2;  // and one more per round of the barrier

// What each rank tells the others before the data moves.
struct Descriptor {
  cuda::DeviceUuid device{};
  cuda::IpcHandle scratch;
  uint8_t willing = 0;  // this rank's call may take this path
};

// Dissemination barrier among the collective's ranks. Barriers of one
// collective share their steps: messages of one peer and step match in
// order, and a rank leaves a barrier only after its peers entered it.
void barrier(CollectiveContext& ctx) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  for (int distance = 1, round = 0; distance < n; distance *= 2, ++round) {
    ctx.send((rank + distance) % n, kBarrierStep + round, nullptr, 0);
    ctx.wait(ctx.recv((rank - distance + n) % n, kBarrierStep + round, nullptr, 0));
  }
}

// Every rank's `all[rank]` into `all` on every rank, under `step`.
template <typename T>
void exchangeWithEveryRank(CollectiveContext& ctx, uint32_t step, std::vector<T>& all) {
  const int rank = ctx.rank();
  for (int p = 0; p < ctx.size(); ++p) {
    if (p != rank) ctx.recv(p, step, &all[p], sizeof(T));
  }
  for (int p = 0; p < ctx.size(); ++p) {
    if (p != rank) ctx.send(p, step, &all[rank], sizeof(T));
  }
  ctx.waitAll();
}

// Ranks on different GPUs of one node: whether every rank's GPU can address
// every other rank's (peer access), which each rank knows only of its own,
// so they tell each other. The same answer on every rank.
bool everyGpuReachesEveryOther(CollectiveContext& ctx, int device, const std::vector<Descriptor>& all) {
  // IPC maps memory of this host only; the node count is the same everywhere.
  if (ctx.communicator().nodes().count() != 1) return false;
  const int n = ctx.size();
  const int rank = ctx.rank();
  std::vector<uint8_t> reaches(n, 1);
  for (int p = 0; p < n; ++p) {
    if (p != rank && !cuda::canReach(device, all[p].device)) reaches[rank] = 0;
  }
  exchangeWithEveryRank(ctx, kReachStep, reaches);
  return std::all_of(reaches.begin(), reaches.end(), [](uint8_t r) { return r != 0; });
}

}  // namespace

DeviceSlice deviceSliceOf(int q, int n, size_t count, size_t elementBytes) {
  const size_t align = std::max<size_t>(kDeviceSliceAlignment / elementBytes, 1);
  const size_t even = (count + n - 1) / n;
  const size_t per = (even + align - 1) / align * align;
  const size_t begin = std::min(static_cast<size_t>(q) * per, count);
  return {begin, std::min(per, count - begin)};
}

bool deviceIpcAllReduce(CollectiveContext& ctx, cuda::Staging& staging, int device, bool streamOrdered, const void* in,
                        void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  const size_t elementBytes = dtypeSize(dtype);
  const int n = ctx.size();
  const int rank = ctx.rank();
  // The same on every rank: the signature makes them agree on count and dtype.
  if (n == 1 || count * elementBytes < kDeviceIpcMinBytes) return false;

  cuda::DeviceScope scope(device);
  cuda::IpcWorkspace& workspace = ctx.communicator().ipcWorkspace();
  workspace.prepare(device);
  std::vector<Descriptor> all(n);
  const bool willing = !streamOrdered && ctx.communicator().world().cudaIpc();
  all[rank] = {cuda::deviceUuid(device), workspace.handle(), static_cast<uint8_t>(willing ? 1 : 0)};
  exchangeWithEveryRank(ctx, kDescriptorStep, all);
  // Every rank sees the same descriptors, so every rank decides alike.
  bool oneGpu = true;
  for (const Descriptor& d : all) {
    if (!d.willing) return false;
    oneGpu = oneGpu && d.device == all[0].device;
  }
  if (!oneGpu && !everyGpuReachesEveryOther(ctx, device, all)) return false;

  std::vector<char*> scratch(n);
  for (int p = 0; p < n; ++p) scratch[p] = p == rank ? workspace.scratch() : workspace.peer(p, all[p].scratch);
  void* stream = staging.deviceStream();
  const Deadline deadline = ctx.communicator().deadline();
  const auto* input = static_cast<const char*>(in);
  auto* output = static_cast<char*>(out);
  const size_t chunkCount = cuda::IpcWorkspace::kScratchBytes / elementBytes;
  for (size_t offset = 0; offset < count; offset += chunkCount) {
    const size_t chunk = std::min(chunkCount, count - offset);
    staging.copyOnDevice(scratch[rank], input + offset * elementBytes, chunk * elementBytes);
    staging.awaitDevice(deadline, "the copy of the input into the device scratch");
    barrier(ctx);

    // Slice `rank`, in this rank's scratch: its own data first, then every
    // other rank's in rank order. Each element is reduced by one rank only,
    // so every rank gets the same bits.
    const DeviceSlice mine = deviceSliceOf(rank, n, chunk, elementBytes);
    if (mine.count > 0) {
      char* reduced = scratch[rank] + mine.begin * elementBytes;
      for (int q = 0; q < n; ++q) {
        if (q == rank) continue;
        cuda::combineOnDevice(reduced, reduced, scratch[q] + mine.begin * elementBytes, mine.count, dtype, op, stream);
      }
      if (op == COMM_OP_AVG) cuda::finishAverageOnDevice(reduced, mine.count, dtype, n, stream);
      staging.awaitDevice(deadline, "the reduction of this rank's slice on the device");
    }
    barrier(ctx);

    for (int q = 0; q < n; ++q) {
      const DeviceSlice slice = deviceSliceOf(q, n, chunk, elementBytes);
      if (slice.count == 0) continue;
      staging.copyOnDevice(output + (offset + slice.begin) * elementBytes, scratch[q] + slice.begin * elementBytes,
                           slice.count * elementBytes);
    }
    staging.awaitDevice(deadline, "the copy of the reduced slices into the output");
    // Nobody refills a scratch while another rank still reads it.
    barrier(ctx);
  }
  return true;
}

}  // namespace comm::algo
