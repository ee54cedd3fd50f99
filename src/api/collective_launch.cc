// The launch of a checked collective call: the body that runs it in a
// CollectiveContext, blocking or behind a handle, on host memory or on the
// host memory that stands for device buffers (docs/cuda.md); and
// runCollective(), which checks and launches a call in one function per
// kind, picked from a table indexed by the kind.
#include "api/collective_call.h"

#include <array>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "algo/collectives.h"
#include "algo/device/device_paths.h"
#include "algo/patterns/blocks.h"
#include "api/collective_checks.h"
#include "api/guard.h"
#include "api/objects.h"
#include "common/dtype.h"
#include "common/log.h"
#include "core/collective_context.h"
#include "core/small_buffer.h"

namespace comm::api {

using core::CollectiveContext;
using core::CollectiveKind;

namespace {

// Who copies a device call's tensors to and from host memory.
enum class StagedBy {
  kLaunch,  // launch, around the body: the body works on host memory only
  kBody,    // the body, which may work on the device instead (and then opens the stream gate)
};

// Run `body` (void(CollectiveContext&)) as `call`, checked into `checked`,
// blocking or through its handle. The call's memory knows where the
// tensors are: for device tensors the body runs on the host memory that
// stands for them, between the copies in and out (unless `stagedBy` says
// the body sees to that), and ordered on the communicator's CUDA stream
// when it has one (docs/cuda.md).
template <typename Body>
void launch(const CollectiveCall& call, const CheckedCall& checked, Body&& body,
            StagedBy stagedBy = StagedBy::kLaunch) {
  const char* name = callName(call.kind);
  // A plain pointer: a communicator drains its queued collectives before it
  // goes away, so it outlives every body it runs.
  core::Communicator* c = checked.communicator;
  std::shared_ptr<cuda::Staging> staging = checked.memory.staging();
  void* stream = staging ? c->stream() : nullptr;
  if (stream != nullptr && c->streamDevice() != checked.memory.device()) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "the communicator's stream (comm_set_stream) belongs to CUDA device {} but the tensors are in the memory of "
         "device {}",
         c->streamDevice(), checked.memory.device());
  }
  // Stream-ordered calls never block the host; one without a handle has
  // nobody to tell of a failure but the log.
  const bool unobserved = stream != nullptr && call.handle == nullptr;
  core::Signature signature = checked.signature;
  if (staging) signature.memory = core::kMemoryDevice;
  const bool stageHere = staging && stagedBy == StagedBy::kLaunch;
  auto op = c->runCollective(
      [c, signature, body = std::forward<Body>(body), staging, stageHere, unobserved, name](uint32_t sequence) {
        try {
          if (stageHere) staging->toHost(c->deadline());
          CollectiveContext ctx(*c, sequence, signature);
          body(ctx);
          ctx.finish();
          if (stageHere) staging->toDevice(c->deadline());
        } catch (const Error& e) {
          if (unobserved) log::error("{} (stream-ordered, no handle) on '{}': {}", name, c->name(), e.what());
          throw;
        }
      },
      call.handle != nullptr || stream != nullptr,
      [&] {
        if (staging) staging->enqueue(stream, stream != nullptr ? &c->streamGate() : nullptr);
      });
  handOut(call.handle, std::move(op));
}

// The data of `t`; null where this rank passes no such tensor.
const void* dataOf(const comm_tensor* t) { return t != nullptr ? t->data : nullptr; }

// `data` moved on by `range`'s offset; null stays null (a rank without
// that buffer).
template <typename T>
T* partOf(T* data, algo::ByteRange range) {
  if (data == nullptr) return nullptr;
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<Byte*>(data) + range.offset;
}

// What the body of all_reduce, reduce or broadcast (collectives of
// independent elements) needs.
struct Elementwise {
  comm_op_t op;
  int root;
  comm_dtype_t dtype;
  size_t count;
  // The host memory the algorithm works on; a broadcast copies src into
  // dst first where they differ (the root's in and out).
  const void* src;
  void* dst;
  std::shared_ptr<cuda::Staging> staging;  // null for a host call
  int device;
  const void* deviceIn;
  void* deviceOut;
  bool streamOrdered;
};

// Collective `kKind` of `e` on the elements of `part`.
template <CollectiveKind kKind>
void runPart(CollectiveContext& ctx, const Elementwise& e, algo::ByteRange part) {
  const size_t count = part.bytes / dtypeSize(e.dtype);
  if constexpr (kKind == CollectiveKind::kAllReduce) {
    algo::allReduce(ctx, partOf(e.src, part), partOf(e.dst, part), count, e.dtype, e.op);
  } else if constexpr (kKind == CollectiveKind::kReduce) {
    algo::reduce(ctx, partOf(e.src, part), partOf(e.dst, part), count, e.dtype, e.op, e.root);
  } else {
    void* into = partOf(e.dst, part);
    if (e.src != nullptr && e.src != e.dst) std::memcpy(into, partOf(e.src, part), part.bytes);
    algo::broadcast(ctx, into, part.bytes, e.root);
  }
}

// A host call runs on the whole of its buffers; a device call goes by the
// device paths (algo/device/device_paths.h), which see to its copies.
template <CollectiveKind kKind>
void launchElementwise(const CollectiveCall& call, const CheckedCall& c) {
  // A broadcast's root without out works in place, in in.
  const comm_tensor* target = kKind == CollectiveKind::kBroadcast && c.out == nullptr ? c.in : c.out;
  launch(
      call, c,
      [e = Elementwise{.op = call.op,
                       .root = call.root,
                       .dtype = c.described->dtype,
                       .count = static_cast<size_t>(c.described->numel),
                       .src = c.memory.at(dataOf(c.in)),
                       .dst = c.memory.at(dataOf(target)),
                       .staging = c.memory.staging(),
                       .device = c.memory.device(),
                       .deviceIn = dataOf(c.in),
                       .deviceOut = const_cast<void*>(dataOf(c.out)),
                       .streamOrdered = c.communicator->stream() != nullptr}](CollectiveContext& ctx) {
        auto part = [&](algo::ByteRange range) { runPart<kKind>(ctx, e, range); };
        if (!e.staging) {
          part(algo::ByteRange{0, e.count * dtypeSize(e.dtype)});
          return;
        }
        algo::runOnDevice(ctx,
                          {.kind = kKind,
                           .op = e.op,
                           .staging = e.staging.get(),
                           .device = e.device,
                           .streamOrdered = e.streamOrdered,
                           .in = e.deviceIn,
                           .out = e.deviceOut,
                           .count = e.count,
                           .dtype = e.dtype},
                          part);
      },
      StagedBy::kBody);
}

// The blocks of all_gather, reduce_scatter, gather and scatter: one per
// rank, each the size of the part. Made into Blocks in the body, as the V
// collectives' blocks are made at the call (in rows).
struct EvenBlocks {
  int size;
};

// The blocks in `unit`s: the size of one block (even) or of one row (V).
algo::Blocks blocksIn(const EvenBlocks& even, size_t unit) { return algo::Blocks::uniform(even.size, unit); }
algo::Blocks blocksIn(const algo::Blocks& rows, size_t unit) { return rows.scaled(unit); }

// Collective `kKind` with rank r's block at b.offsets()[r] of the buffer
// that holds them all, `b` in elements for reduce_scatter, else in bytes.
template <CollectiveKind kKind>
void runBlocks(CollectiveContext& ctx, const void* src, void* dst, const algo::Blocks& b, comm_dtype_t dtype,
               comm_op_t op, int root) {
  using enum CollectiveKind;
  if constexpr (kKind == kAllGather || kKind == kAllGatherV) {
    algo::allGatherV(ctx, src, dst, b.counts(), b.offsets());
  } else if constexpr (kKind == kReduceScatter || kKind == kReduceScatterV) {
    algo::reduceScatterV(ctx, src, dst, b.counts(), b.offsets(), dtype, op);
  } else if constexpr (kKind == kGather || kKind == kGatherV) {
    algo::gatherV(ctx, src, dst, b.counts(), b.offsets(), root);
  } else {
    algo::scatterV(ctx, src, dst, b.counts(), b.offsets(), root);
  }
}

// `blocks` (EvenBlocks, or a V collective's Blocks in rows) counts in
// units of `unitElements` elements each.
template <CollectiveKind kKind, typename Source>
void launchBlocks(const CollectiveCall& call, const CheckedCall& c, Source&& blocks, size_t unitElements) {
  constexpr bool kInElements = kKind == CollectiveKind::kReduceScatter || kKind == CollectiveKind::kReduceScatterV;
  launch(call, c,
         [op = call.op, root = call.root, dtype = c.described->dtype, src = c.memory.at(dataOf(c.in)),
          dst = c.memory.at(dataOf(c.out)), blocks = std::forward<Source>(blocks),
          unit = kInElements ? unitElements : unitElements * c.described->elementSize](CollectiveContext& ctx) {
           runBlocks<kKind>(ctx, src, dst, blocksIn(blocks, unit), dtype, op, root);
         });
}

void launchAllToAllSingle(const CollectiveCall& call, CheckedCall& c) {
  launch(call, c,
         [send = std::move(*c.blocks), recv = std::move(*c.outBlocks), size = c.communicator->size(),
          rowBytes = c.in->rowBytes(), src = static_cast<const char*>(c.memory.at(c.in->data)),
          dst = static_cast<char*>(c.memory.at(c.out->data))](CollectiveContext& ctx) {
           const algo::Blocks sendBytes = send.scaled(rowBytes);
           const algo::Blocks recvBytes = recv.scaled(rowBytes);
           core::PerRank<const void*> sendPtrs(size);
           core::PerRank<void*> recvPtrs(size);
           for (int p = 0; p < size; ++p) {
             sendPtrs[p] = src + sendBytes.offsets()[p];
             recvPtrs[p] = dst + recvBytes.offsets()[p];
           }
           algo::allToAll(ctx, sendPtrs.data(), sendBytes.counts(), recvPtrs.data(), recvBytes.counts());
         });
}

void launchAllToAll(const CollectiveCall& call, CheckedCall& c) {
  TensorLists& lists = *c.lists;
  for (int p = 0; p < c.communicator->size(); ++p) {
    lists.in[p] = c.memory.at(lists.in[p]);
    lists.out[p] = c.memory.at(lists.out[p]);
  }
  launch(call, c, [lists = std::move(lists)](CollectiveContext& ctx) {
    algo::allToAll(ctx, lists.in.data(), lists.inBytes.data(), lists.out.data(), lists.outBytes.data());
  });
}

// Launches a call of kind `kKind`: the body of its family, chosen at
// compile time.
template <CollectiveKind kKind>
void launchAs(const CollectiveCall& call, CheckedCall& c) {
  using enum CollectiveKind;
  c.memory.prepare();
  if constexpr (kKind == kBarrier) {
    launch(call, c, [](CollectiveContext& ctx) { algo::barrier(ctx); });
  } else if constexpr (kKind == kAllReduce || kKind == kReduce || kKind == kBroadcast) {
    launchElementwise<kKind>(call, c);
  } else if constexpr (kKind == kAllGather || kKind == kReduceScatter || kKind == kGather || kKind == kScatter) {
    launchBlocks<kKind>(call, c, EvenBlocks{c.communicator->size()}, static_cast<size_t>(c.described->numel));
  } else if constexpr (kKind == kAllToAllSingle) {
    launchAllToAllSingle(call, c);
  } else if constexpr (kKind == kAllToAll) {
    launchAllToAll(call, c);
  } else {
    // The V collectives: their blocks from counts.
    launchBlocks<kKind>(call, c, std::move(*c.blocks), static_cast<size_t>(c.described->rowElements()));
  }
}

// Checks and launches a call of kind `kKind`, in one function: the checks'
// row unrolled and the body chosen at compile time.
template <CollectiveKind kKind>
comm_status_t runAs(const CollectiveCall& call) noexcept {
  return guardOut(callName(kKind), call.handle, [&] {
    CheckedCall checked;
    checkCall<kKind>(call, checked);
    launchAs<kKind>(call, checked);
  });
}

using RunFn = comm_status_t (*)(const CollectiveCall&) noexcept;

template <size_t... kKind>
constexpr std::array<RunFn, sizeof...(kKind) + 1> runnersOf(std::index_sequence<kKind...>) {
  return {nullptr, &runAs<static_cast<CollectiveKind>(kKind + 1)>...};
}

// One runner per kind, indexed by CollectiveKind (row 0 unused).
constexpr std::array<RunFn, core::kCollectiveKinds> kRunners =
    runnersOf(std::make_index_sequence<core::kCollectiveKinds - 1>{});

}  // namespace

comm_status_t runCollective(const CollectiveCall& call) noexcept {
  return kRunners[static_cast<size_t>(call.kind)](call);
}

}  // namespace comm::api
