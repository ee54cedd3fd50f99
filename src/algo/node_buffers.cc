#include "algo/node_buffers.h"

#include <algorithm>
#include <cstring>

#include "algo/pipeline.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

struct Announcement {
  uint64_t input = 0;
  uint64_t output = 0;
  uint8_t mayAccess = 0;  // the rank may reach every other rank's memory
  uint8_t padding[7] = {};
};

// Sends `size` bytes at `mine` to every other rank of the group under
// `step`, receives each one's into `slotOf(rank)`, and waits for all of it.
template <typename SlotOf>
void swapWithEveryone(CollectiveContext& ctx, uint32_t step, const void* mine, size_t size, SlotOf slotOf) {
  std::vector<RequestId> ids;
  for (int p = 0; p < ctx.size(); ++p) {
    if (p != ctx.rank()) ids.push_back(ctx.recv(p, step, slotOf(p), size));
  }
  for (int p = 0; p < ctx.size(); ++p) {
    if (p != ctx.rank()) ids.push_back(ctx.send(p, step, mine, size));
  }
  waitEach(ctx, ids);
}

}  // namespace

std::optional<NodeBuffers> NodeBuffers::exchange(CollectiveContext& ctx, const void* in, void* out, uint32_t step) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  std::vector<Announcement> all(n);
  bool mayAccess = true;
  for (int p = 0; p < n; ++p) {
    if (p != rank) mayAccess = mayAccess && ctx.mayAccessMemoryOf(ctx.communicatorRank(p));
  }
  all[rank].input = reinterpret_cast<uint64_t>(in);
  all[rank].output = reinterpret_cast<uint64_t>(out);
  all[rank].mayAccess = mayAccess ? 1 : 0;
  swapWithEveryone(ctx, step, &all[rank], sizeof(Announcement), [&](int p) { return &all[p]; });
  if (!std::all_of(all.begin(), all.end(), [](const Announcement& a) { return a.mayAccess != 0; })) {
    return std::nullopt;
  }
  NodeBuffers buffers;
  buffers.ownInput_ = static_cast<const char*>(in);
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    buffers.others_.push_back(ctx.communicatorRank(p));
    buffers.otherInputs_.push_back(reinterpret_cast<const char*>(all[p].input));
    buffers.otherOutputs_.push_back(reinterpret_cast<char*>(all[p].output));
  }
  return buffers;
}

void NodeBuffers::combine(CollectiveContext& ctx, size_t offset, size_t bytes, void* dest, comm_dtype_t dtype,
                          comm_op_t op) const {
  const size_t elementSize = dtypeSize(dtype);
  // A chunk at a time: what is read is combined while still in cache.
  char* landing = ctx.scratch(core::Scratch::kPeerReads, kChunkBytes);
  for (size_t done = 0; done < bytes; done += kChunkBytes) {
    const size_t piece = std::min(kChunkBytes, bytes - done);
    char* to = static_cast<char*>(dest) + done;
    const char* own = ownInput_ + offset + done;
    if (others_.empty() && to != own) std::memcpy(to, own, piece);
    for (size_t i = 0; i < others_.size(); ++i) {
      ctx.readMemoryOf(others_[i], landing, otherInputs_[i] + offset + done, piece);
      reduce::combine(to, i == 0 ? own : to, landing, piece / elementSize, dtype, op);
    }
  }
}

void NodeBuffers::share(CollectiveContext& ctx, size_t offset, size_t bytes, const void* from) const {
  for (size_t i = 0; i < others_.size(); ++i) ctx.writeMemoryOf(others_[i], otherOutputs_[i] + offset, from, bytes);
}

void NodeBuffers::finish(CollectiveContext& ctx, uint32_t step) const {
  swapWithEveryone(ctx, step, nullptr, 0, [](int) { return nullptr; });
}

}  // namespace comm::algo
