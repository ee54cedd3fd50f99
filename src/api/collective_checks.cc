#include "api/collective_checks.h"

#include <algorithm>
#include <string>

#include "api/guard.h"
#include "api/objects.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::api {

using core::CallMemory;
using core::CollectiveKind;

namespace {

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

struct Row {
  const char* call;
  Part part;
  Count count;
  Check checks[12];
};

// Indexed by CollectiveKind; each row's checks run in its order, which
// decides the error a call with several faults gets.
// clang-format off
constexpr Row kRows[core::kCollectiveKinds] = {
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

void checkOp(comm_op_t op, comm_dtype_t dtype) {
  if (!validOp(op)) fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not a comm_op_t", static_cast<int>(op));
  if (!reduce::supported(dtype, op)) {
    fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not defined for dtype {}", opName(op), dtypeName(dtype));
  }
}

void checkSameDtype(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  if (a.dtype != b.dtype) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} is {} but {} is {}", aName, dtypeName(a.dtype), bName, dtypeName(b.dtype));
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

// all_to_all_single's blocks of `t` from `splits` (NULL: even).
Layout splitLayout(const comm_tensor& t, const int64_t* splits, int size, int64_t rowElements, const char* tensorName,
                   const char* splitName) {
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
}

// all_to_all's lists: as many tensors as ranks each way, in one dtype, and
// this rank's message to itself fits.
TensorLists listsOf(const CollectiveCall& call, int rank, int size, CheckedCall& checked) {
  if (call.nins != size) fail(COMM_ERR_INVALID_ARGUMENT, "nins {} differs from the group size {}", call.nins, size);
  if (call.nouts != size) fail(COMM_ERR_INVALID_ARGUMENT, "nouts {} differs from the group size {}", call.nouts, size);
  require(call.ins, "ins");
  require(call.outs, "outs");
  TensorLists lists(size);
  comm_dtype_t dtype = tensor(call.ins[0], "ins[0]").dtype;
  for (int p = 0; p < size; ++p) {
    std::string inName = fmt::format("ins[{}]", p), outName = fmt::format("outs[{}]", p);
    const comm_tensor& i = tensor(call.ins[p], inName.c_str());
    const comm_tensor& o = tensor(call.outs[p], outName.c_str());
    if (i.dtype != dtype) {
      fail(COMM_ERR_INVALID_ARGUMENT, "ins[{}] is {} but ins[0] is {}; input dtypes must agree", p, dtypeName(i.dtype),
           dtypeName(dtype));
    }
    checkSameDtype(i, inName.c_str(), o, outName.c_str());
    checked.memory.add(i, inName.c_str(), CallMemory::kIn);
    checked.memory.add(o, outName.c_str(), CallMemory::kOut);
    lists.in[p] = i.data;
    lists.inBytes[p] = i.nbytes();
    lists.out[p] = o.data;
    lists.outBytes[p] = o.nbytes();
  }
  if (lists.inBytes[rank] != lists.outBytes[rank]) {
    fail(COMM_ERR_INVALID_ARGUMENT, "ins[{0}] has {1} bytes but outs[{0}] has {2}; a rank's message to itself must fit",
         rank, lists.inBytes[rank], lists.outBytes[rank]);
  }
  checked.signature.dtype = dtype;
  return lists;
}

// Runs check `check` of `row` on `call`, recording in `c` what it finds.
void run(Check check, const Row& row, const CollectiveCall& call, CheckedCall& c) {
  const core::Communicator& comm = *c.communicator;
  const bool onRoot = comm.rank() == call.root;
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
    case kCounts:
      c.blocks.emplace(layoutOf(call.counts, "counts", comm.size(), part->rowElements(), part->elementSize));
      c.signature.extra = c.blocks->hash();
      break;
    case kPartRows: checkRows(*part, partName, call.counts[comm.rank()], "counts[rank]"); break;
    case kWholeRows:
      if (both) checkRows(*whole, wholeName, c.blocks->totalRows(), "sum(counts)");
      break;
    case kInPlaceOnly:
      if (both) checkAliasing(*part, *whole, 0);
      break;
    case kInPlaceAsBlock:
      if (both) {
        checkAliasing(*part, *whole, c.blocks ? c.blocks->offsets()[comm.rank()] : part->nbytes() * comm.rank());
      }
      break;
    case kDisjoint:
      if (overlaps(*c.in, *c.out)) fail(COMM_ERR_INVALID_ARGUMENT, "in and out overlap");
      break;
    case kSplits: {
      const int64_t rowElements = c.in->rowElements();
      c.blocks.emplace(splitLayout(*c.in, call.inSplits, comm.size(), rowElements, "in", "in_splits"));
      c.outBlocks.emplace(splitLayout(*c.out, call.outSplits, comm.size(), rowElements, "out", "out_splits"));
      break;
    }
    case kLists: c.lists.emplace(listsOf(call, comm.rank(), comm.size(), c)); break;
    case kUseIn:
      if (c.in != nullptr) c.memory.add(*c.in, "in", CallMemory::kIn);
      break;
    case kUseOut:
      if (c.out != nullptr) c.memory.add(*c.out, "out", CallMemory::kOut);
      break;
  }
}

}  // namespace

const char* callName(CollectiveKind kind) { return kRows[static_cast<size_t>(kind)].call; }

CheckedCall checkCall(const CollectiveCall& call) {
  const Row& row = kRows[static_cast<size_t>(call.kind)];
  CheckedCall c;
  c.communicator = &communicator(call.comm);
  c.signature.kind = static_cast<uint16_t>(call.kind);
  for (Check check : row.checks) {
    if (check == kEnd) break;
    run(check, row, call, c);
  }
  const comm_tensor* part = row.part == Part::kOut ? c.out : c.in;
  c.described = part != nullptr ? part : c.out;
  if (c.described != nullptr) c.signature.dtype = c.described->dtype;
  switch (row.count) {
    case Count::kNone: break;
    case Count::kElements: c.signature.count = c.described->numel; break;
    case Count::kBlocks: c.signature.count = c.blocks->totalRows() * c.described->rowElements(); break;
    case Count::kRowElements: c.signature.count = c.in->rowElements(); break;
  }
  return c;
}

}  // namespace comm::api
