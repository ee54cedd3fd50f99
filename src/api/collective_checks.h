// The checks of a collective call's arguments: one table, a row per kind,
// that lists in order what is checked, and how a row runs. Errors are
// COMM_ERR_INVALID_ARGUMENT (or INVALID_USAGE for a destroyed object)
// naming the argument. The rows run unrolled at compile time where the
// launcher includes this header (api/collective_launch.cc), so that each
// kind's checks compile to the code its entry point would hold written out:
// a small collective's call is short, and checks are a good part of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "algo/patterns/blocks.h"
#include "api/collective_call.h"
#include "api/guard.h"
#include "api/objects.h"
#include "core/call_memory.h"
#include "core/communicator.h"
#include "core/signature.h"
#include "core/small_buffer.h"

namespace comm::api {

// all_to_all's tensors, one per rank each way: where they are and their sizes.
struct TensorLists {
  explicit TensorLists(int size) : in(size), out(size), inBytes(size), outBytes(size) {}
  core::PerRank<const void*> in;
  core::PerRank<void*> out;
  core::PerRank<size_t> inBytes, outBytes;
};

// What checking a call found, which its launch reads.
struct CheckedCall {
  core::Communicator* communicator = nullptr;
  // The tensors this rank passes; null where it passes none (a rooted
  // call's side that only the root has, a broadcast's root in place).
  const comm_tensor* in = nullptr;
  const comm_tensor* out = nullptr;
  // The tensor that says the call's dtype and count on this rank (in, or
  // out where this rank's block is out, or where there is no in).
  const comm_tensor* described = nullptr;
  core::CallMemory memory;
  // What every rank must agree on (without Signature::memory: the launch
  // sets it).
  core::Signature signature;
  // The per-rank blocks, in rows, that a V collective's counts give (of the
  // tensor that holds every rank's block), or all_to_all_single's of in;
  // outBlocks: all_to_all_single's of out.
  std::optional<algo::Blocks> blocks;
  std::optional<algo::Blocks> outBlocks;
  std::optional<TensorLists> lists;  // all_to_all's
};

// The reports of the checks below, out of line: a call that passes its
// checks runs no formatting code.
[[noreturn]] void failDtypes(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName);
[[noreturn]] void failNumel(const comm_tensor& t, const char* name, int64_t expected, const char* why);
[[noreturn]] void failOverlap();
[[noreturn]] void failRowShape(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName);
[[noreturn]] void failRows(const comm_tensor& t, const char* name, int64_t expected, const char* why);

// The checks the rows are made of, each throwing on failure.
void checkOp(comm_op_t op, comm_dtype_t dtype);

inline void checkSameDtype(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  if (a.dtype != b.dtype) failDtypes(a, aName, b, bName);
}

inline void checkNumel(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  if (t.numel != expected) failNumel(t, name, expected, why);
}

inline bool overlaps(const comm_tensor& a, const comm_tensor& b) {
  auto* a0 = static_cast<const char*>(a.data);
  auto* b0 = static_cast<const char*>(b.data);
  return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// `in` and `out` may be the same buffer or `in` exactly `out`'s block at
// `offset` bytes; any other overlap is an error.
inline void checkAliasing(const comm_tensor& in, const comm_tensor& out, size_t allowedOffset) {
  if (!overlaps(in, out)) return;
  if (static_cast<const char*>(in.data) == static_cast<const char*>(out.data) + allowedOffset) return;
  if (in.data == out.data && in.nbytes() == out.nbytes()) return;
  failOverlap();
}

// Rows of `a` and `b` have the same shape: dims 1.. agree one by one, so
// that rows keep their meaning across ranks (equal element counts do not).
inline void checkRowShape(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  bool same = (a.ndim > 1 ? a.ndim : 1) == (b.ndim > 1 ? b.ndim : 1);
  for (int d = 1; same && d < a.ndim; ++d) same = a.shape[d] == b.shape[d];
  if (!same) failRowShape(a, aName, b, bName);
}

// `t` has `expected` rows along dim 0 (a 0-d tensor has one).
inline void checkRows(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  if (t.rows() != expected) failRows(t, name, expected, why);
}

// Checks the per-rank row counts `counts` (the argument `name`) and
// appends their blocks to `rows` (made for the group's size, empty).
// Returns the hash that tells the counts apart in the signature.
uint64_t appendCounts(algo::Blocks& rows, const int64_t* counts, const char* name);
// all_to_all_single's blocks of `t`, in rows, from `splits` (NULL: even)
// into `rows` (made for the group's size, empty).
void splitInto(algo::Blocks& rows, const comm_tensor& t, const int64_t* splits, const char* tensorName,
               const char* splitName);
// all_to_all's lists: as many tensors as ranks each way, in one dtype, and
// this rank's message to itself fits; their memory joins `checked`'s.
TensorLists listsOf(const CollectiveCall& call, int rank, int size, CheckedCall& checked);

namespace detail {

// One check of a call's arguments. The rooted and gathered collectives
// name two tensors by their role: the part (this rank's block: in of
// all_gather and gather, out of reduce_scatter and scatter, with their V
// forms) and the whole (the other, which holds every rank's block); the
// collectives of whole tensors (all_reduce, reduce, broadcast) take in as
// the part. A check that reads a tensor this rank does not pass (a rooted
// call's side that only the root has) is skipped.
enum Check : uint8_t {
  kEnd = 0,         // the row has no more
  kRoot,            // root is a rank of the communicator; the signature carries it
  kIn,              // in is a live tensor
  kOut,             // out is a live tensor
  kInOnRoot,        // in is, on the root; no in elsewhere
  kOutOnRoot,       // out is, on the root; no out elsewhere
  kOutOrInPlace,    // out is, but on the root, where NULL means in place (broadcast)
  kSameDtype,       // in and out have one dtype
  kSameCount,       // out has as many elements as in
  kOp,              // op is a comm_op_t defined for the dtype; the signature carries it
  kRowShape,        // the part's rows have the whole's shape
  kEvenRows,        // the whole has size x the part's rows
  kCounts,          // counts: a row count >= 0 per rank; the blocks of the whole
  kPartRows,        // the part has counts[rank] rows
  kWholeRows,       // the whole has sum(counts) rows
  kInPlaceOnly,     // in and out overlap only as the same buffer
  kInPlaceAsBlock,  // ... or as the part at its rank's block of the whole
  kDisjoint,        // in and out do not overlap at all
  kSplits,          // all_to_all_single's splits against in and out
  kLists,           // all_to_all's lists: a tensor per rank, one dtype, a rank's own message fits
  kUseIn,           // in's memory is the call's (CallMemory::add)
  kUseOut,          // out's memory is the call's
};

// What the ranks' signatures agree on as the count.
enum class Count : uint8_t {
  kNone,         // nothing (barrier; all_to_all's sizes are free)
  kElements,     // the described tensor's elements
  kBlocks,       // the elements of all blocks together (the V collectives)
  kRowElements,  // the elements of a row (all_to_all_single: the splits are free)
};

// Which tensor is the part.
enum class Part : uint8_t { kIn, kOut };

// The most checks a row lists.
inline constexpr size_t kMaxChecks = 12;

struct Row {
  const char* call;
  Part part;
  Count count;
  Check checks[kMaxChecks];
};

// Indexed by CollectiveKind; each row's checks run in its order, which
// decides the error a call with several faults gets.
// clang-format off
inline constexpr Row kRows[core::kCollectiveKinds] = {
    {},
    {"comm_barrier", Part::kIn, Count::kNone, {}},
    {"comm_all_reduce", Part::kIn, Count::kElements,
     {kIn, kOut, kSameDtype, kSameCount, kOp, kInPlaceOnly, kUseIn, kUseOut}},
    {"comm_reduce", Part::kIn, Count::kElements,
     {kRoot, kIn, kOp, kUseIn, kOutOnRoot, kSameDtype, kSameCount, kInPlaceOnly, kUseOut}},
    {"comm_broadcast", Part::kIn, Count::kElements,
     {kRoot, kInOnRoot, kOutOrInPlace, kSameDtype, kSameCount, kInPlaceOnly, kUseIn, kUseOut}},
    {"comm_all_gather", Part::kIn, Count::kElements,
     {kIn, kOut, kSameDtype, kRowShape, kEvenRows, kInPlaceAsBlock, kUseIn, kUseOut}},
    {"comm_reduce_scatter", Part::kOut, Count::kElements,
     {kIn, kOut, kSameDtype, kRowShape, kEvenRows, kOp, kInPlaceAsBlock, kUseIn, kUseOut}},
    {"comm_gather", Part::kIn, Count::kElements,
     {kRoot, kIn, kUseIn, kOutOnRoot, kSameDtype, kRowShape, kEvenRows, kInPlaceAsBlock, kUseOut}},
    {"comm_scatter", Part::kOut, Count::kElements,
     {kRoot, kOut, kInOnRoot, kSameDtype, kRowShape, kEvenRows, kInPlaceAsBlock, kUseIn, kUseOut}},
    {"comm_all_to_all_single", Part::kIn, Count::kRowElements,
     {kIn, kOut, kSameDtype, kRowShape, kDisjoint, kSplits, kUseIn, kUseOut}},
    {"comm_all_to_all", Part::kIn, Count::kNone, {kLists}},
    {"comm_all_gather_v", Part::kIn, Count::kBlocks,
     {kIn, kOut, kSameDtype, kRowShape, kCounts, kPartRows, kWholeRows, kInPlaceAsBlock, kUseIn, kUseOut}},
    {"comm_reduce_scatter_v", Part::kOut, Count::kBlocks,
     {kIn, kOut, kSameDtype, kOp, kRowShape, kCounts, kWholeRows, kPartRows, kInPlaceAsBlock, kUseIn, kUseOut}},
    {"comm_gather_v", Part::kIn, Count::kBlocks,
     {kRoot, kIn, kCounts, kPartRows, kUseIn, kOutOnRoot, kSameDtype, kRowShape, kWholeRows, kInPlaceAsBlock, kUseOut}},
    {"comm_scatter_v", Part::kOut, Count::kBlocks,
     {kRoot, kOut, kCounts, kPartRows, kInOnRoot, kSameDtype, kRowShape, kWholeRows, kInPlaceAsBlock, kUseIn, kUseOut}},
};
// clang-format on

// Runs check `check` of `row` on `call`, recording in `c` what it finds.
// Always inlined with constant arguments (checkCall below), so that each
// kind's checks compile to the code its entry point would hold written out.
[[gnu::always_inline]] inline void run(Check check, const Row& row, const CollectiveCall& call, CheckedCall& c) {
  const core::Communicator& comm = *c.communicator;
  const bool onRoot = comm.rank() == call.root;  // meaningful after kRoot
  const bool partIsOut = row.part == Part::kOut;
  const comm_tensor* part = partIsOut ? c.out : c.in;
  const comm_tensor* whole = partIsOut ? c.in : c.out;
  const char* partName = partIsOut ? "out" : "in";
  const char* wholeName = partIsOut ? "in" : "out";
  const bool both = c.in != nullptr && c.out != nullptr;
  switch (check) {
    case kEnd: break;
    case kRoot:
      checkRank(comm, call.root, "root");
      c.signature.root = call.root;
      break;
    case kIn: c.in = &tensor(call.in, "in"); break;
    case kOut: c.out = &tensor(call.out, "out"); break;
    case kInOnRoot:
      if (onRoot) c.in = &tensor(call.in, "in (on the root)");
      break;
    case kOutOnRoot:
      if (onRoot) c.out = &tensor(call.out, "out (on the root)");
      break;
    case kOutOrInPlace:
      if (!onRoot || call.out != nullptr) c.out = &tensor(call.out, "out");
      break;
    case kSameDtype:
      if (both) checkSameDtype(*c.in, "in", *c.out, "out");
      break;
    case kSameCount:
      if (both) checkNumel(*c.out, "out", c.in->numel, "as many as in");
      break;
    case kOp:
      checkOp(call.op, c.in->dtype);
      c.signature.op = call.op;
      break;
    case kRowShape:
      if (both) checkRowShape(*part, partName, *whole, wholeName);
      break;
    case kEvenRows:
      if (both) {
        checkRows(*whole, wholeName, part->rows() * comm.size(), partIsOut ? "size x out's rows" : "size x in's rows");
      }
      break;
    case kCounts: c.signature.extra = appendCounts(c.blocks.emplace(comm.size()), call.counts, "counts"); break;
    case kPartRows: checkRows(*part, partName, call.counts[comm.rank()], "counts[rank]"); break;
    case kWholeRows:
      if (both) checkRows(*whole, wholeName, static_cast<int64_t>(c.blocks->total()), "sum(counts)");
      break;
    case kInPlaceOnly:
      if (both) checkAliasing(*part, *whole, 0);
      break;
    case kInPlaceAsBlock:
      if (both) {
        checkAliasing(*part, *whole,
                      c.blocks ? c.blocks->offsets()[comm.rank()] * part->rowBytes() : part->nbytes() * comm.rank());
      }
      break;
    case kDisjoint:
      if (overlaps(*c.in, *c.out)) fail(COMM_ERR_INVALID_ARGUMENT, "in and out overlap");
      break;
    case kSplits: {
      splitInto(c.blocks.emplace(comm.size()), *c.in, call.inSplits, "in", "in_splits");
      splitInto(c.outBlocks.emplace(comm.size()), *c.out, call.outSplits, "out", "out_splits");
      break;
    }
    case kLists: c.lists.emplace(listsOf(call, comm.rank(), comm.size(), c)); break;
    case kUseIn:
      if (c.in != nullptr) c.memory.add(*c.in, "in", core::CallMemory::kIn);
      break;
    case kUseOut:
      if (c.out != nullptr) c.memory.add(*c.out, "out", core::CallMemory::kOut);
      break;
  }
}

}  // namespace detail

// "comm_all_reduce": the C function that makes a call of `kind`.
constexpr const char* callName(core::CollectiveKind kind) { return detail::kRows[static_cast<size_t>(kind)].call; }

// Checks `call`, of kind `kKind`, by its row, recording in `c` what the
// checks find; throws comm::Error on the first failure.
template <core::CollectiveKind kKind>
void checkCall(const CollectiveCall& call, CheckedCall& c) {
  using namespace detail;
  constexpr const Row& row = kRows[static_cast<size_t>(kKind)];
  c.communicator = &communicator(call.comm);
  c.signature.kind = static_cast<uint16_t>(kKind);
  [&]<size_t... kStep>(std::index_sequence<kStep...>) { (run(row.checks[kStep], row, call, c), ...); }
  (std::make_index_sequence<kMaxChecks>{});
  const comm_tensor* part = row.part == Part::kOut ? c.out : c.in;
  c.described = part != nullptr ? part : c.out;
  if (c.described != nullptr) c.signature.dtype = c.described->dtype;
  if constexpr (row.count == Count::kElements) c.signature.count = c.described->numel;
  if constexpr (row.count == Count::kBlocks) {
    c.signature.count = static_cast<int64_t>(c.blocks->total()) * c.described->rowElements();
  }
  if constexpr (row.count == Count::kRowElements) c.signature.count = c.in->rowElements();
}

}  // namespace comm::api
