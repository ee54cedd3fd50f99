#include "api/collective_checks.h"

#include <string>

#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::api {

using core::CallMemory;

namespace {

// "[3, 2]": the shape of one row (dims 1..; "[]" for 0-d and 1-d tensors).
std::string rowShapeText(const comm_tensor& t) {
  std::string text = "[";
  for (int d = 1; d < t.ndim; ++d) text += fmt::format("{}{}", d > 1 ? ", " : "", t.shape[d]);
  return text + "]";
}

}  // namespace

void checkOp(comm_op_t op, comm_dtype_t dtype) {
  if (!validOp(op)) fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not a comm_op_t", static_cast<int>(op));
  if (!reduce::supported(dtype, op)) {
    fail(COMM_ERR_INVALID_ARGUMENT, "op {} is not defined for dtype {}", opName(op), dtypeName(dtype));
  }
}

void failDtypes(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  fail(COMM_ERR_INVALID_ARGUMENT, "{} is {} but {} is {}", aName, dtypeName(a.dtype), bName, dtypeName(b.dtype));
}

void failNumel(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  fail(COMM_ERR_INVALID_ARGUMENT, "{} has {} elements, expected {} ({})", name, t.numel, expected, why);
}

void failOverlap() { fail(COMM_ERR_INVALID_ARGUMENT, "in and out overlap other than in place"); }

void failRowShape(const comm_tensor& a, const char* aName, const comm_tensor& b, const char* bName) {
  fail(COMM_ERR_INVALID_ARGUMENT, "rows of {} are {} but rows of {} are {}; dims after dim 0 must agree", aName,
       rowShapeText(a), bName, rowShapeText(b));
}

void failRows(const comm_tensor& t, const char* name, int64_t expected, const char* why) {
  fail(COMM_ERR_INVALID_ARGUMENT, "{} has {} rows (dim 0), expected {} ({})", name, t.rows(), expected, why);
}

uint64_t appendCounts(algo::Blocks& rows, const int64_t* counts, const char* name) {
  require(counts, name);
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, a count at a time
  for (int r = 0; r < rows.parts(); ++r) {
    if (counts[r] < 0) fail(COMM_ERR_INVALID_ARGUMENT, "{}[{}] = {} is negative", name, r, counts[r]);
    rows.append(static_cast<size_t>(counts[r]));
    hash = (hash ^ static_cast<uint64_t>(counts[r])) * 1099511628211ull;
  }
  return hash;
}

void splitInto(algo::Blocks& rows, const comm_tensor& t, const int64_t* splits, const char* tensorName,
               const char* splitName) {
  const int size = rows.parts();
  if (splits == nullptr) {
    if (t.rows() % size != 0) {
      fail(COMM_ERR_INVALID_ARGUMENT, "dim 0 of {} ({}) does not divide by the group size {}; pass {}", tensorName,
           t.rows(), size, splitName);
    }
    rows.fillUniform(static_cast<size_t>(t.rows() / size));
    return;
  }
  appendCounts(rows, splits, splitName);
  if (static_cast<int64_t>(rows.total()) != t.rows()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} add up to {} rows but {} has {}", splitName, rows.total(), tensorName,
         t.rows());
  }
}

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

}  // namespace comm::api
