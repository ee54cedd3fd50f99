#include "api/collective_launch.h"

#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "algo/collectives.h"
#include "algo/device/device_paths.h"
#include "api/objects.h"
#include "common/dtype.h"
#include "common/log.h"
#include "core/collective_context.h"

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
void launch(const CollectiveCall& call, const CheckedCall& checked, Body body, StagedBy stagedBy = StagedBy::kLaunch) {
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
      [c, signature, body = std::move(body), staging, stageHere, unobserved, name](uint32_t sequence) {
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
  CollectiveKind kind;
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

// Elementwise `e`'s collective on the elements of `part`.
void runPart(CollectiveContext& ctx, const Elementwise& e, algo::ByteRange part) {
  const size_t count = part.bytes / dtypeSize(e.dtype);
  switch (e.kind) {
    case CollectiveKind::kAllReduce:
      algo::allReduce(ctx, partOf(e.src, part), partOf(e.dst, part), count, e.dtype, e.op);
      break;
    case CollectiveKind::kReduce:
      algo::reduce(ctx, partOf(e.src, part), partOf(e.dst, part), count, e.dtype, e.op, e.root);
      break;
    default: {
      void* into = partOf(e.dst, part);
      if (e.src != nullptr && e.src != e.dst) std::memcpy(into, partOf(e.src, part), part.bytes);
      algo::broadcast(ctx, into, part.bytes, e.root);
    }
  }
}

// A host call runs on the whole of its buffers; a device call goes by the
// device paths (algo/device/device_paths.h), which see to its copies.
void launchElementwise(const CollectiveCall& call, const CheckedCall& c) {
  const bool broadcast = call.kind == CollectiveKind::kBroadcast;
  // A broadcast's root without out works in place, in in.
  const comm_tensor* target = broadcast && c.out == nullptr ? c.in : c.out;
  Elementwise e{.kind = call.kind,
                .op = call.op,
                .root = call.root,
                .dtype = c.described->dtype,
                .count = static_cast<size_t>(c.described->numel),
                .src = c.memory.at(dataOf(c.in)),
                .dst = c.memory.at(dataOf(target)),
                .staging = c.memory.staging(),
                .device = c.memory.device(),
                .deviceIn = dataOf(c.in),
                .deviceOut = const_cast<void*>(dataOf(c.out)),
                .streamOrdered = c.communicator->stream() != nullptr};
  launch(
      call, c,
      [e = std::move(e)](CollectiveContext& ctx) {
        auto part = [&](algo::ByteRange range) { runPart(ctx, e, range); };
        if (!e.staging) {
          part(algo::ByteRange{0, e.count * dtypeSize(e.dtype)});
          return;
        }
        algo::runOnDevice(ctx,
                          {.kind = e.kind,
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

// The blocks of all_gather, reduce_scatter, gather and scatter: `elements`
// per rank. Made into a Layout in the body, as the V collectives' blocks
// are at the call.
struct EvenBlocks {
  int size;
  int64_t elements;
  size_t elementSize;
};

Layout layoutOf(const EvenBlocks& even) { return Layout::even(even.size, 1, even.elements, even.elementSize); }
const Layout& layoutOf(const Layout& layout) { return layout; }

// The collective of `kind` with rank r's block at l.offsets()[r] of the
// buffer that holds them all.
void runBlocks(CollectiveContext& ctx, CollectiveKind kind, const void* src, void* dst, const Layout& l,
               comm_dtype_t dtype, comm_op_t op, int root) {
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllGatherV: algo::allGatherV(ctx, src, dst, l.bytes(), l.offsets()); break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterV:
      algo::reduceScatterV(ctx, src, dst, l.elements(), l.elementOffsets(), dtype, op);
      break;
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherV: algo::gatherV(ctx, src, dst, l.bytes(), l.offsets(), root); break;
    default: algo::scatterV(ctx, src, dst, l.bytes(), l.offsets(), root);
  }
}

template <typename Blocks>
void launchBlocks(const CollectiveCall& call, const CheckedCall& c, Blocks blocks) {
  launch(call, c,
         [kind = call.kind, op = call.op, root = call.root, dtype = c.described->dtype, src = c.memory.at(dataOf(c.in)),
          dst = c.memory.at(dataOf(c.out)), blocks = std::move(blocks)](CollectiveContext& ctx) {
           runBlocks(ctx, kind, src, dst, layoutOf(blocks), dtype, op, root);
         });
}

void launchAllToAllSingle(const CollectiveCall& call, CheckedCall& c) {
  launch(call, c,
         [send = std::move(*c.blocks), recv = std::move(*c.outBlocks), size = c.communicator->size(),
          src = static_cast<const char*>(c.memory.at(c.in->data)),
          dst = static_cast<char*>(c.memory.at(c.out->data))](CollectiveContext& ctx) {
           PerRank<const void*> sendPtrs(size);
           PerRank<void*> recvPtrs(size);
           for (int p = 0; p < size; ++p) {
             sendPtrs[p] = src + send.offsets()[p];
             recvPtrs[p] = dst + recv.offsets()[p];
           }
           algo::allToAll(ctx, sendPtrs.data(), send.bytes(), recvPtrs.data(), recv.bytes());
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

}  // namespace

void launchCall(const CollectiveCall& call, CheckedCall& checked) {
  checked.memory.prepare();
  switch (call.kind) {
    case CollectiveKind::kBarrier: launch(call, checked, [](CollectiveContext& ctx) { algo::barrier(ctx); }); break;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
    case CollectiveKind::kBroadcast: launchElementwise(call, checked); break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      launchBlocks(call, checked,
                   EvenBlocks{checked.communicator->size(), checked.described->numel, checked.described->elementSize});
      break;
    case CollectiveKind::kAllGatherV:
    case CollectiveKind::kReduceScatterV:
    case CollectiveKind::kGatherV:
    case CollectiveKind::kScatterV: launchBlocks(call, checked, std::move(*checked.blocks)); break;
    case CollectiveKind::kAllToAllSingle: launchAllToAllSingle(call, checked); break;
    case CollectiveKind::kAllToAll: launchAllToAll(call, checked); break;
  }
}

}  // namespace comm::api
