// The collectives: argument checks, the signature every rank must agree on,
// and the hand-off to algo/.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "algo/all_reduce/device_ipc.h"
#include "algo/collectives.h"
#include "algo/device_single_rank.h"
#include "algo/staged_segments.h"
#include "api/guard.h"
#include "api/objects.h"
#include "common/dtype.h"
#include "common/log.h"
#include "core/call_memory.h"
#include "core/collective_context.h"
#include "core/small_buffer.h"
#include "reduce/reduce.h"

using comm::fail;
using comm::api::guardOut;
using comm::api::require;
using comm::core::CallMemory;
using comm::core::CollectiveContext;
using comm::core::CollectiveKind;
using comm::core::Signature;

namespace {

// Who copies a device call's tensors to and from host memory.
enum class StagedBy {
  kLaunch,  // launch, around the body: the body works on host memory only
  kBody,    // the body, which may work on the device instead (and then opens the stream gate)
};

// Run `body` (void(CollectiveContext&)) as collective `signature` on `comm`,
// blocking or through `handle`. `memory` knows where the tensors are: for
// device tensors the body runs on the host memory that stands for them,
// between the copies in and out (unless `stagedBy` says the body sees to
// that), and ordered on the communicator's CUDA stream when it has one
// (docs/cuda.md).
template <typename Body>
void launch(const char* call, comm_communicator* comm, comm_handle_t** handle, Signature signature,
            const CallMemory& memory, Body body, StagedBy stagedBy = StagedBy::kLaunch) {
  // A plain pointer: a communicator drains its queued collectives before it
  // goes away, so it outlives every body it runs.
  comm::core::Communicator* c = comm->impl.get();
  std::shared_ptr<comm::cuda::Staging> staging = memory.staging();
  void* stream = staging ? c->stream() : nullptr;
  if (stream != nullptr && c->streamDevice() != memory.device()) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "the communicator's stream (comm_set_stream) belongs to CUDA device {} but the tensors are in the memory of "
         "device {}",
         c->streamDevice(), memory.device());
  }
  // Stream-ordered calls never block the host; one without a handle has
  // nobody to tell of a failure but the log.
  const bool unobserved = stream != nullptr && handle == nullptr;
  if (staging) signature.memory = comm::core::kMemoryDevice;
  const bool stageHere = staging && stagedBy == StagedBy::kLaunch;
  auto op = c->runCollective(
      [c, signature, body = std::move(body), staging, stageHere, unobserved, call](uint32_t sequence) {
        try {
          if (stageHere) staging->toHost(c->deadline());
          CollectiveContext ctx(*c, sequence, signature);
          body(ctx);
          ctx.finish();
          if (stageHere) staging->toDevice(c->deadline());
        } catch (const comm::Error& e) {
          if (unobserved) comm::log::error("{} (stream-ordered, no handle) on '{}': {}", call, c->name(), e.what());
          throw;
        }
      },
      handle != nullptr || stream != nullptr,
      [&] {
        if (staging) staging->enqueue(stream, stream != nullptr ? &c->streamGate() : nullptr);
      });
  comm::api::handOut(handle, std::move(op));
}

// `data` moved on by `range`'s offset; null stays null (a rank without
// that buffer).
template <typename T>
T* partOf(T* data, comm::algo::ByteRange range) {
  if (data == nullptr) return nullptr;
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<Byte*>(data) + range.offset;
}

// The body of a collective of `count` elements of `dtype` that are
// independent of each other: `run(range)` on the whole of a host call. A
// device call (`staging` set; its buffers `deviceIn` and `deviceOut` of
// CUDA device `device`, null where this rank has none) at one rank copies
// on the device (dividing by one where `average`); at more it runs `run` on
// the host memory standing for its buffers, in parts when large
// (algo/staged_segments.h). A template: a host call, the common one, makes
// no std::function.
template <typename Run>
void runElementwise(CollectiveContext& ctx, comm::cuda::Staging* staging, int device, const void* deviceIn,
                    void* deviceOut, size_t count, comm_dtype_t dtype, bool average, Run run) {
  const size_t element = comm::dtypeSize(dtype);
  if (staging == nullptr) {
    run(comm::algo::ByteRange{0, count * element});
  } else if (!comm::algo::deviceSingleRank(ctx, *staging, device, deviceIn, deviceOut, count, dtype, average)) {
    comm::algo::runStaged(ctx, *staging, deviceIn, deviceOut, count * element, element, run);
  }
}

Signature signatureOf(CollectiveKind kind, comm_dtype_t dtype, int64_t count) {
  Signature s;
  s.kind = static_cast<uint16_t>(kind);
  s.dtype = dtype;
  s.count = count;
  return s;
}

void checkOp(comm_op_t op, comm_dtype_t dtype) {
  if (!comm::validOp(op)) fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not a comm_op_t", static_cast<int>(op));
  if (!comm::reduce::supported(dtype, op)) {
    fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not defined for dtype {}", comm::opName(op), comm::dtypeName(dtype));
  }
}

void checkSameDtype(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  if (a.dtype != b.dtype) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is {} but {} is {}", aName, comm::dtypeName(a.dtype), bName,
         comm::dtypeName(b.dtype));
  }
}

void checkNumel(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  if (t.numel != expected) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} has {} elements, expected {} ({})", name, t.numel, expected, why);
  }
}

bool overlaps(const comm_tensor& a, const comm_tensor& b) {
  auto* a0 = static_cast<const char*>(a.data);
  auto* b0 = static_cast<const char*>(b.data);
  return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// `in` and `out` may be the same buffer or `in` exactly `out`'s block at
// `offset` bytes; any other overlap is an error.
void checkAliasing(const comm_tensor& in, const comm_tensor& out, size_t allowedOffset) {
  if (!overlaps(in, out)) return;
  if (static_cast<const char*>(in.data) == static_cast<const char*>(out.data) + allowedOffset) return;
  if (in.data == out.data && in.nbytes() == out.nbytes()) return;
  fail(COMM_ERR_INVALID_ARGUMENT, "in and out overlap other than in place");
}

// Group sizes up to this keep their per-rank tables on the stack.
constexpr size_t kInlineRanks = 16;
template <typename T>
using PerRank = comm::core::SmallBuffer<T, kInlineRanks>;

// Every rank's block of a tensor split by rows: its size and offset in bytes
// and in elements.
class Layout {
 public:
  // Every column is written by append() or even() before it is read.
  explicit Layout(int size) : size_(size), columns_(4 * static_cast<size_t>(size), comm::core::kForOverwrite) {}

  // `rowsPerRank` rows for every rank; hash 0. No division or hashing per
  // rank: at 8 B this layout is a good part of a rooted collective's call.
  static Layout even(int size, int64_t rowsPerRank, int64_t rowElements, size_t elementSize) {
    Layout l(size);
    const size_t elements = static_cast<size_t>(rowsPerRank) * static_cast<size_t>(rowElements);
    const size_t bytes = elements * elementSize;
    for (size_t r = 0; r < l.size_; ++r) l.setBlock(r, elements, bytes, r * bytes, r * elements);
    l.filled_ = l.size_;
    l.endBytes_ = l.size_ * bytes;
    l.totalRows_ = static_cast<int64_t>(l.size_) * rowsPerRank;
    l.hash_ = 0;
    return l;
  }

  const size_t* bytes() const { return column(0); }
  const size_t* offsets() const { return column(1); }
  const size_t* elements() const { return column(2); }
  const size_t* elementOffsets() const { return column(3); }
  int64_t totalRows() const { return totalRows_; }
  // Tells layouts apart in the signature; 0 for even ones, which agree on the count alone.
  uint64_t hash() const { return hash_; }

  // Appends the next rank's block of `rows` rows.
  void append(int64_t rows, int64_t rowElements, size_t elementSize) {
    const size_t elements = static_cast<size_t>(rows) * static_cast<size_t>(rowElements);
    setBlock(filled_, elements, elements * elementSize, endBytes_, endBytes_ / elementSize);
    endBytes_ += elements * elementSize;
    totalRows_ += rows;
    hash_ = (hash_ ^ static_cast<uint64_t>(rows)) * 1099511628211ull;
    ++filled_;
  }

 private:
  size_t* column(int c) { return columns_.data() + static_cast<size_t>(c) * size_; }
  const size_t* column(int c) const { return columns_.data() + static_cast<size_t>(c) * size_; }
  // Rank `rank`'s block, in every column.
  void setBlock(size_t rank, size_t elements, size_t bytes, size_t byteOffset, size_t elementOffset) {
    column(0)[rank] = bytes;
    column(1)[rank] = byteOffset;
    column(2)[rank] = elements;
    column(3)[rank] = elementOffset;
  }

  size_t size_;
  comm::core::SmallBuffer<size_t, 4 * kInlineRanks> columns_;
  size_t filled_ = 0;
  size_t endBytes_ = 0;
  int64_t totalRows_ = 0;
  uint64_t hash_ = 1469598103934665603ull;
};

// Per-rank row counts -> the layout; checks them.
Layout layoutOf(const int64_t* counts, const char* name, int size, int64_t rowElements, size_t elementSize) {
  require(counts, name);
  Layout l(size);
  for (int r = 0; r < size; ++r) {
    if (counts[r] < 0) fail(COMM_ERR_INVALID_ARGUMENT, "{}[{}] = {} is negative", name, r, counts[r]);
    l.append(counts[r], rowElements, elementSize);
  }
  return l;
}

// "[3, 2]": the shape of one row (dims 1..; "[]" for 0-d and 1-d tensors).
std::string rowShapeText(const comm_tensor& t) {
  std::string text = "[";
  for (int d = 1; d < t.ndim; ++d) text += fmt::format("{}{}", d > 1 ? ", " : "", t.shape[d]);
  return text + "]";
}

// Rows of `a` and `b` have the same shape: dims 1.. agree one by one, so
// that rows keep their meaning across ranks (equal element counts do not).
void checkRowShape(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  bool same = std::max(a.ndim, 1) == std::max(b.ndim, 1);
  for (int d = 1; same && d < a.ndim; ++d) same = a.shape[d] == b.shape[d];
  if (!same) {
    fail(COMM_ERR_INVALID_ARGUMENT, "rows of {} are {} but rows of {} are {}; dims after dim 0 must agree", aName,
         rowShapeText(a), bName, rowShapeText(b));
  }
}

// `t` has `expected` rows along dim 0 (a 0-d tensor has one).
void checkRows(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  if (t.rows() != expected) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} has {} rows (dim 0), expected {} ({})", name, t.rows(), expected, why);
  }
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_barrier(comm_t* comm, comm_handle_t** handle) {
  return guardOut("comm_barrier", handle, [&] {
    comm::api::communicator(comm);
    Signature s;
    s.kind = static_cast<uint32_t>(CollectiveKind::kBarrier);
    launch("comm_barrier", comm, handle, s, CallMemory(), [](CollectiveContext& ctx) { comm::algo::barrier(ctx); });
  });
}

COMM_API comm_status_t comm_all_reduce(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op,
                                       comm_handle_t** handle) {
  return guardOut("comm_all_reduce", handle, [&] {
    comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkNumel(o, "out", i.numel, "as many as in");
    checkOp(op, i.dtype);
    checkAliasing(i, o, 0);
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kAllReduce, i.dtype, i.numel);
    s.op = op;
    size_t count = i.numel;
    comm_dtype_t dtype = i.dtype;
    const void* src = memory.at(i.data);
    void* dst = memory.at(o.data);
    // On device memory a rank alone copies on the device, ranks that share a
    // GPU reduce on it, others stage (in parts when large).
    launch(
        "comm_all_reduce", comm, handle, s, memory,
        [=, staging = memory.staging(), device = memory.device(), deviceIn = i.data, deviceOut = o.data,
         streamOrdered = comm->impl->stream() != nullptr](CollectiveContext& ctx) {
          if (staging && comm::algo::deviceIpcAllReduce(ctx, *staging, device, streamOrdered, deviceIn, deviceOut,
                                                        count, dtype, op)) {
            staging->finishOnDevice();
            return;
          }
          const size_t element = comm::dtypeSize(dtype);
          runElementwise(ctx, staging.get(), device, deviceIn, deviceOut, count, dtype, op == COMM_OP_AVG,
                         [&](comm::algo::ByteRange part) {
                           comm::algo::allReduce(ctx, partOf(src, part), partOf(dst, part), part.bytes / element, dtype,
                                                 op);
                         });
        },
        StagedBy::kBody);
  });
}

COMM_API comm_status_t comm_reduce(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op, int root,
                                   comm_handle_t** handle) {
  return guardOut("comm_reduce", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor& i = comm::api::tensor(in, "in");
    checkOp(op, i.dtype);
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    void* dst = nullptr;
    if (c.rank() == root) {
      const comm_tensor& o = comm::api::tensor(out, "out (on the root)");
      checkSameDtype(i, "in", o, "out");
      checkNumel(o, "out", i.numel, "as many as in");
      checkAliasing(i, o, 0);
      memory.add(o, "out", CallMemory::kOut);
      dst = o.data;
    }
    memory.prepare();
    void* deviceDst = dst;
    dst = memory.at(dst);
    Signature s = signatureOf(CollectiveKind::kReduce, i.dtype, i.numel);
    s.op = op;
    s.root = root;
    size_t count = i.numel;
    comm_dtype_t dtype = i.dtype;
    const void* src = memory.at(i.data);
    launch(
        "comm_reduce", comm, handle, s, memory,
        [=, staging = memory.staging(), device = memory.device(), deviceIn = i.data,
         deviceOut = deviceDst](CollectiveContext& ctx) {
          const size_t element = comm::dtypeSize(dtype);
          runElementwise(ctx, staging.get(), device, deviceIn, deviceOut, count, dtype, op == COMM_OP_AVG,
                         [&](comm::algo::ByteRange part) {
                           comm::algo::reduce(ctx, partOf(src, part), partOf(dst, part), part.bytes / element, dtype,
                                              op, root);
                         });
        },
        StagedBy::kBody);
  });
}

COMM_API comm_status_t comm_broadcast(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                      comm_handle_t** handle) {
  return guardOut("comm_broadcast", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor* described;
    void* buffer;
    const void* source = nullptr;
    // What a device call's copies move: the root's input in, and every
    // output (the root's only when apart from its input) back.
    const void* deviceIn = nullptr;
    void* deviceOut = nullptr;
    CallMemory memory;
    if (c.rank() == root) {
      const comm_tensor& i = comm::api::tensor(in, "in (on the root)");
      described = &i;
      buffer = i.data;
      deviceIn = i.data;
      if (out != nullptr) {
        const comm_tensor& o = comm::api::tensor(out, "out");
        checkSameDtype(i, "in", o, "out");
        checkNumel(o, "out", i.numel, "as many as in");
        checkAliasing(i, o, 0);
        memory.add(i, "in", CallMemory::kIn);
        memory.add(o, "out", CallMemory::kOut);
        buffer = o.data;
        deviceOut = o.data;
        source = i.data;
      } else {
        memory.add(i, "in", CallMemory::kIn);
      }
    } else {
      const comm_tensor& o = comm::api::tensor(out, "out");
      memory.add(o, "out", CallMemory::kOut);
      described = &o;
      buffer = o.data;
      deviceOut = o.data;
    }
    memory.prepare();
    buffer = memory.at(buffer);
    source = memory.at(source);
    Signature s = signatureOf(CollectiveKind::kBroadcast, described->dtype, described->numel);
    s.root = root;
    size_t count = described->numel;
    comm_dtype_t dtype = described->dtype;
    launch(
        "comm_broadcast", comm, handle, s, memory,
        [=, staging = memory.staging(), device = memory.device()](CollectiveContext& ctx) {
          runElementwise(ctx, staging.get(), device, deviceIn, deviceOut, count, dtype, false,
                         [&](comm::algo::ByteRange part) {
                           void* into = partOf(buffer, part);
                           if (source != nullptr && source != buffer)
                             std::memcpy(into, partOf(source, part), part.bytes);
                           comm::algo::broadcast(ctx, into, part.bytes, root);
                         });
        },
        StagedBy::kBody);
  });
}

COMM_API comm_status_t comm_all_gather(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                       comm_handle_t** handle) {
  return guardOut("comm_all_gather", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkRowShape(i, "in", o, "out");
    checkRows(o, "out", i.rows() * c.size(), "size x in's rows");
    checkAliasing(i, o, i.nbytes() * c.rank());
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    launch("comm_all_gather", comm, handle, signatureOf(CollectiveKind::kAllGather, i.dtype, i.numel), memory,
           [size = c.size(), numel = i.numel, elementSize = i.elementSize, src = memory.at(i.data),
            dst = memory.at(o.data)](CollectiveContext& ctx) {
             const Layout l = Layout::even(size, 1, numel, elementSize);
             comm::algo::allGatherV(ctx, src, dst, l.bytes(), l.offsets());
           });
  });
}

COMM_API comm_status_t comm_reduce_scatter(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op,
                                           comm_handle_t** handle) {
  return guardOut("comm_reduce_scatter", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkRowShape(o, "out", i, "in");
    checkRows(i, "in", o.rows() * c.size(), "size x out's rows");
    checkOp(op, i.dtype);
    checkAliasing(o, i, o.nbytes() * c.rank());
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kReduceScatter, i.dtype, o.numel);
    s.op = op;
    int size = c.size();
    launch("comm_reduce_scatter", comm, handle, s, memory,
           [op, size, dtype = i.dtype, elementSize = o.elementSize, count = o.numel, src = memory.at(i.data),
            dst = memory.at(o.data)](CollectiveContext& ctx) {
             const Layout l = Layout::even(size, 1, count, elementSize);
             comm::algo::reduceScatterV(ctx, src, dst, l.elements(), l.elementOffsets(), dtype, op);
           });
  });
}

COMM_API comm_status_t comm_gather(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                   comm_handle_t** handle) {
  return guardOut("comm_gather", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor& i = comm::api::tensor(in, "in");
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    void* dst = nullptr;
    if (c.rank() == root) {
      const comm_tensor& o = comm::api::tensor(out, "out (on the root)");
      checkSameDtype(i, "in", o, "out");
      checkRowShape(i, "in", o, "out");
      checkRows(o, "out", i.rows() * c.size(), "size x in's rows");
      checkAliasing(i, o, i.nbytes() * c.rank());
      memory.add(o, "out", CallMemory::kOut);
      dst = o.data;
    }
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kGather, i.dtype, i.numel);
    s.root = root;
    launch("comm_gather", comm, handle, s, memory,
           [size = c.size(), numel = i.numel, elementSize = i.elementSize, root, src = memory.at(i.data),
            dst = memory.at(dst)](CollectiveContext& ctx) {
             const Layout l = Layout::even(size, 1, numel, elementSize);
             comm::algo::gatherV(ctx, src, dst, l.bytes(), l.offsets(), root);
           });
  });
}

COMM_API comm_status_t comm_scatter(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                    comm_handle_t** handle) {
  return guardOut("comm_scatter", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor& o = comm::api::tensor(out, "out");
    CallMemory memory;
    const void* src = nullptr;
    if (c.rank() == root) {
      const comm_tensor& i = comm::api::tensor(in, "in (on the root)");
      checkSameDtype(i, "in", o, "out");
      checkRowShape(o, "out", i, "in");
      checkRows(i, "in", o.rows() * c.size(), "size x out's rows");
      checkAliasing(o, i, o.nbytes() * c.rank());
      memory.add(i, "in", CallMemory::kIn);
      src = i.data;
    }
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kScatter, o.dtype, o.numel);
    s.root = root;
    launch("comm_scatter", comm, handle, s, memory,
           [size = c.size(), numel = o.numel, elementSize = o.elementSize, root, src = memory.at(src),
            dst = memory.at(o.data)](CollectiveContext& ctx) {
             const Layout l = Layout::even(size, 1, numel, elementSize);
             comm::algo::scatterV(ctx, src, dst, l.bytes(), l.offsets(), root);
           });
  });
}

COMM_API comm_status_t comm_all_to_all_single(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                              const int64_t* out_splits, const int64_t* in_splits,
                                              comm_handle_t** handle) {
  return guardOut("comm_all_to_all_single", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkRowShape(i, "in", o, "out");
    if (overlaps(i, o)) fail(COMM_ERR_INVALID_ARGUMENT, "in and out overlap");
    int size = c.size();
    int64_t rowElements = i.rowElements();
    auto layout = [&](const comm_tensor& t, const int64_t* splits, const char* tensorName, const char* splitName) {
      if (splits == nullptr) {
        if (t.rows() % size != 0) {
          fail(COMM_ERR_INVALID_ARGUMENT, "dim 0 of {} ({}) does not divide by the group size {}; pass {}", tensorName,
               t.rows(), size, splitName);
        }
        return Layout::even(size, t.rows() / size, rowElements, t.elementSize);
      }
      Layout l = layoutOf(splits, splitName, size, rowElements, t.elementSize);
      if (l.totalRows() != t.rows()) {
        fail(COMM_ERR_INVALID_ARGUMENT, "{} add up to {} rows but {} has {}", splitName, l.totalRows(), tensorName,
             t.rows());
      }
      return l;
    };
    Layout send = layout(i, in_splits, "in", "in_splits");
    Layout recv = layout(o, out_splits, "out", "out_splits");
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    launch("comm_all_to_all_single", comm, handle, signatureOf(CollectiveKind::kAllToAllSingle, i.dtype, rowElements),
           memory,
           [send = std::move(send), recv = std::move(recv), size, src = static_cast<const char*>(memory.at(i.data)),
            dst = static_cast<char*>(memory.at(o.data))](CollectiveContext& ctx) {
             PerRank<const void*> sendPtrs(size);
             PerRank<void*> recvPtrs(size);
             for (int p = 0; p < size; ++p) {
               sendPtrs[p] = src + send.offsets()[p];
               recvPtrs[p] = dst + recv.offsets()[p];
             }
             comm::algo::allToAll(ctx, sendPtrs.data(), send.bytes(), recvPtrs.data(), recv.bytes());
           });
  });
}

COMM_API comm_status_t comm_all_to_all(comm_t* comm, int nins, const comm_tensor_t* const* ins, int nouts,
                                       comm_tensor_t* const* outs, comm_handle_t** handle) {
  return guardOut("comm_all_to_all", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    int size = c.size();
    if (nins != size) fail(COMM_ERR_INVALID_ARGUMENT, "nins {} differs from the group size {}", nins, size);
    if (nouts != size) fail(COMM_ERR_INVALID_ARGUMENT, "nouts {} differs from the group size {}", nouts, size);
    require(ins, "ins");
    require(outs, "outs");
    PerRank<const void*> sendPtrs(size);
    PerRank<void*> recvPtrs(size);
    PerRank<size_t> sendBytes(size), recvBytes(size);
    comm_dtype_t dtype = comm::api::tensor(ins[0], "ins[0]").dtype;
    CallMemory memory;
    for (int p = 0; p < size; ++p) {
      std::string inName = fmt::format("ins[{}]", p), outName = fmt::format("outs[{}]", p);
      const comm_tensor& i = comm::api::tensor(ins[p], inName.c_str());
      const comm_tensor& o = comm::api::tensor(outs[p], outName.c_str());
      if (i.dtype != dtype) {
        fail(COMM_ERR_INVALID_ARGUMENT, "ins[{}] is {} but ins[0] is {}; input dtypes must agree", p,
             comm::dtypeName(i.dtype), comm::dtypeName(dtype));
      }
      checkSameDtype(i, inName.c_str(), o, outName.c_str());
      memory.add(i, inName.c_str(), CallMemory::kIn);
      memory.add(o, outName.c_str(), CallMemory::kOut);
      sendPtrs[p] = i.data;
      sendBytes[p] = i.nbytes();
      recvPtrs[p] = o.data;
      recvBytes[p] = o.nbytes();
    }
    if (sendBytes[c.rank()] != recvBytes[c.rank()]) {
      fail(COMM_ERR_INVALID_ARGUMENT,
           "ins[{0}] has {1} bytes but outs[{0}] has {2}; a rank's message to itself must fit", c.rank(),
           sendBytes[c.rank()], recvBytes[c.rank()]);
    }
    memory.prepare();
    for (int p = 0; p < size; ++p) {
      sendPtrs[p] = memory.at(sendPtrs[p]);
      recvPtrs[p] = memory.at(recvPtrs[p]);
    }
    launch("comm_all_to_all", comm, handle, signatureOf(CollectiveKind::kAllToAll, dtype, -1), memory,
           [sendPtrs, recvPtrs, sendBytes, recvBytes](CollectiveContext& ctx) {
             comm::algo::allToAll(ctx, sendPtrs.data(), sendBytes.data(), recvPtrs.data(), recvBytes.data());
           });
  });
}

COMM_API comm_status_t comm_all_gather_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                         const int64_t* counts, comm_handle_t** handle) {
  return guardOut("comm_all_gather_v", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkRowShape(i, "in", o, "out");
    int64_t rowElements = o.rowElements();
    Layout l = layoutOf(counts, "counts", c.size(), rowElements, o.elementSize);
    checkRows(i, "in", counts[c.rank()], "counts[rank]");
    checkRows(o, "out", l.totalRows(), "sum(counts)");
    checkAliasing(i, o, l.offsets()[c.rank()]);
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kAllGatherV, i.dtype, l.totalRows() * rowElements);
    s.extra = l.hash();
    launch("comm_all_gather_v", comm, handle, s, memory,
           [l = std::move(l), src = memory.at(i.data), dst = memory.at(o.data)](CollectiveContext& ctx) {
             comm::algo::allGatherV(ctx, src, dst, l.bytes(), l.offsets());
           });
  });
}

COMM_API comm_status_t comm_reduce_scatter_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                             const int64_t* counts, comm_op_t op, comm_handle_t** handle) {
  return guardOut("comm_reduce_scatter_v", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    const comm_tensor& i = comm::api::tensor(in, "in");
    const comm_tensor& o = comm::api::tensor(out, "out");
    checkSameDtype(i, "in", o, "out");
    checkOp(op, i.dtype);
    checkRowShape(o, "out", i, "in");
    int64_t rowElements = i.rowElements();
    Layout l = layoutOf(counts, "counts", c.size(), rowElements, i.elementSize);
    checkRows(i, "in", l.totalRows(), "sum(counts)");
    checkRows(o, "out", counts[c.rank()], "counts[rank]");
    checkAliasing(o, i, l.offsets()[c.rank()]);
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kReduceScatterV, i.dtype, l.totalRows() * rowElements);
    s.op = op;
    s.extra = l.hash();
    launch("comm_reduce_scatter_v", comm, handle, s, memory,
           [l = std::move(l), op, dtype = i.dtype, src = memory.at(i.data),
            dst = memory.at(o.data)](CollectiveContext& ctx) {
             comm::algo::reduceScatterV(ctx, src, dst, l.elements(), l.elementOffsets(), dtype, op);
           });
  });
}

COMM_API comm_status_t comm_gather_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, const int64_t* counts,
                                     int root, comm_handle_t** handle) {
  return guardOut("comm_gather_v", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor& i = comm::api::tensor(in, "in");
    int64_t rowElements = i.rowElements();
    Layout l = layoutOf(counts, "counts", c.size(), rowElements, i.elementSize);
    checkRows(i, "in", counts[c.rank()], "counts[rank]");
    CallMemory memory;
    memory.add(i, "in", CallMemory::kIn);
    void* dst = nullptr;
    if (c.rank() == root) {
      const comm_tensor& o = comm::api::tensor(out, "out (on the root)");
      checkSameDtype(i, "in", o, "out");
      checkRowShape(i, "in", o, "out");
      checkRows(o, "out", l.totalRows(), "sum(counts)");
      checkAliasing(i, o, l.offsets()[c.rank()]);
      memory.add(o, "out", CallMemory::kOut);
      dst = o.data;
    }
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kGatherV, i.dtype, l.totalRows() * rowElements);
    s.root = root;
    s.extra = l.hash();
    launch("comm_gather_v", comm, handle, s, memory,
           [l = std::move(l), root, src = memory.at(i.data), dst = memory.at(dst)](CollectiveContext& ctx) {
             comm::algo::gatherV(ctx, src, dst, l.bytes(), l.offsets(), root);
           });
  });
}

COMM_API comm_status_t comm_scatter_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, const int64_t* counts,
                                      int root, comm_handle_t** handle) {
  return guardOut("comm_scatter_v", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::checkRank(c, root, "root");
    const comm_tensor& o = comm::api::tensor(out, "out");
    int64_t rowElements = o.rowElements();
    Layout l = layoutOf(counts, "counts", c.size(), rowElements, o.elementSize);
    checkRows(o, "out", counts[c.rank()], "counts[rank]");
    CallMemory memory;
    const void* src = nullptr;
    if (c.rank() == root) {
      const comm_tensor& i = comm::api::tensor(in, "in (on the root)");
      checkSameDtype(i, "in", o, "out");
      checkRowShape(o, "out", i, "in");
      checkRows(i, "in", l.totalRows(), "sum(counts)");
      checkAliasing(o, i, l.offsets()[c.rank()]);
      memory.add(i, "in", CallMemory::kIn);
      src = i.data;
    }
    memory.add(o, "out", CallMemory::kOut);
    memory.prepare();
    Signature s = signatureOf(CollectiveKind::kScatterV, o.dtype, l.totalRows() * rowElements);
    s.root = root;
    s.extra = l.hash();
    launch("comm_scatter_v", comm, handle, s, memory,
           [l = std::move(l), root, src = memory.at(src), dst = memory.at(o.data)](CollectiveContext& ctx) {
             comm::algo::scatterV(ctx, src, dst, l.bytes(), l.offsets(), root);
           });
  });
}

}  // extern "C"
