#include "algo/blocks/node_buffers.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "algo/blocks/pipeline.h"
#include "common/dtype.h"
#include "common/error.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

struct Announcement {
  uint64_t input = 0;
  uint64_t output = 0;
  uint64_t log = 0;
  uint8_t mayRead = 0;  // the rank may read every other rank's memory
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

size_t bytesOf(const NodeBuffers::Part& part) {
  size_t bytes = 0;
  for (const NodeBuffers::Range& range : part) bytes += range.bytes;
  return bytes;
}

// How many entries the log of `part` holds: its pieces come chunk by chunk
// (algo/blocks/pipeline.h), a few cut short at block ends and at its ranges'
// ends.
size_t logCapacityFor(const NodeBuffers::Part& part) { return bytesOf(part) / kChunkBytes + part.size() + 64; }

// Whether [offset, offset + bytes) lies within one range of `part`.
bool within(const NodeBuffers::Part& part, uint64_t offset, uint64_t bytes) {
  return std::any_of(part.begin(), part.end(), [&](const NodeBuffers::Range& range) {
    const uint64_t end = range.offset + range.bytes;
    return offset >= range.offset && offset <= end && bytes <= end - offset;
  });
}

}  // namespace

std::optional<NodeBuffers> NodeBuffers::exchange(CollectiveContext& ctx, const void* in, void* out,
                                                 std::vector<Part> parts, uint32_t step) {
  const int n = ctx.size();
  const int rank = ctx.rank();
  NodeBuffers buffers;
  buffers.logCapacity_ = logCapacityFor(parts[rank]);
  buffers.log_ = std::make_unique<uint64_t[]>(1 + 2 * buffers.logCapacity_);
  std::vector<Announcement> all(n);
  bool mayRead = true;
  for (int p = 0; p < n; ++p) {
    if (p != rank) mayRead = mayRead && ctx.mayReadMemoryOf(ctx.communicatorRank(p));
  }
  all[rank].input = reinterpret_cast<uint64_t>(in);
  all[rank].output = reinterpret_cast<uint64_t>(out);
  all[rank].log = reinterpret_cast<uint64_t>(buffers.log_.get());
  all[rank].mayRead = mayRead ? 1 : 0;
  swapWithEveryone(ctx, step, &all[rank], sizeof(Announcement), [&](int p) { return &all[p]; });
  if (!std::all_of(all.begin(), all.end(), [](const Announcement& a) { return a.mayRead != 0; })) {
    return std::nullopt;
  }
  buffers.ownInput_ = static_cast<const char*>(in);
  buffers.ownOutput_ = static_cast<char*>(out);
  buffers.parts_ = std::move(parts);
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    buffers.others_.push_back({p, ctx.communicatorRank(p), reinterpret_cast<const char*>(all[p].input),
                               reinterpret_cast<const char*>(all[p].output),
                               reinterpret_cast<const uint64_t*>(all[p].log)});
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
      ctx.readMemoryOf(others_[i].rank, landing, others_[i].input + offset + done, piece);
      reduce::combine(to, i == 0 ? own : to, landing, piece / elementSize, dtype, op);
    }
  }
}

void NodeBuffers::markFinal(size_t offset, size_t bytes) {
  std::atomic_ref<uint64_t> count(log_[0]);
  const uint64_t entries = count.load(std::memory_order_relaxed);
  if (entries == logCapacity_) return;
  log_[1 + 2 * entries] = offset;
  log_[2 + 2 * entries] = bytes;
  // A reader in another process sees the entry before the count that covers it.
  count.store(entries + 1, std::memory_order_release);
}

void NodeBuffers::fetchFinished(CollectiveContext& ctx) {
  for (Other& other : others_) fetchListed(ctx, other);
}

void NodeBuffers::fetchListed(CollectiveContext& ctx, Other& other) {
  uint64_t entries = 0;
  ctx.readMemoryOf(other.rank, &entries, other.log, sizeof entries);
  if (entries == other.fetched) return;
  const Part& part = parts_[other.groupRank];
  if (entries < other.fetched || entries > logCapacityFor(part)) {
    fail(COMM_ERR_REMOTE, "{}: rank {} lists {} finished pieces of its part, after {} and at most {} (it gave up?)",
         ctx.what(), other.rank, entries, other.fetched, logCapacityFor(part));
  }
  std::vector<uint64_t> ranges(2 * (entries - other.fetched));
  ctx.readMemoryOf(other.rank, ranges.data(), other.log + 1 + 2 * other.fetched, ranges.size() * sizeof(uint64_t));
  for (size_t i = 0; i < ranges.size(); i += 2) {
    const uint64_t offset = ranges[i], bytes = ranges[i + 1];
    if (!within(part, offset, bytes)) {
      fail(COMM_ERR_REMOTE, "{}: rank {} lists bytes [{}, {}) as finished, outside its part (it gave up?)", ctx.what(),
           other.rank, offset, offset + bytes);
    }
    ctx.readMemoryOf(other.rank, ownOutput_ + offset, other.output + offset, bytes);
    other.fetchedBytes += bytes;
  }
  other.fetched = entries;
}

void NodeBuffers::collect(CollectiveContext& ctx, uint32_t step) {
  // "Final" goes only where there is a part to fetch: a reduce_scatter,
  // whose parts are all empty, needs only the last handshake.
  std::vector<std::pair<size_t, RequestId>> finished;
  for (size_t i = 0; i < others_.size(); ++i) {
    if (bytesOf(parts_[others_[i].groupRank]) > 0)
      finished.emplace_back(i, ctx.recv(others_[i].groupRank, step, nullptr, 0));
  }
  std::vector<RequestId> told;
  if (bytesOf(parts_[ctx.rank()]) > 0) {
    for (const Other& other : others_) told.push_back(ctx.send(other.groupRank, step, nullptr, 0));
  }
  for (const auto& [i, id] : finished) {
    ctx.wait(id);
    Other& other = others_[i];
    fetchListed(ctx, other);
    // Its log ran out before its part did: what it did not list, again whole.
    const Part& part = parts_[other.groupRank];
    if (other.fetchedBytes == bytesOf(part)) continue;
    for (const Range& range : part) {
      if (range.bytes == 0) continue;
      ctx.readMemoryOf(other.rank, ownOutput_ + range.offset, other.output + range.offset, range.bytes);
    }
  }
  waitEach(ctx, told);
  swapWithEveryone(ctx, step + 1, nullptr, 0, [](int) { return nullptr; });
}

}  // namespace comm::algo
