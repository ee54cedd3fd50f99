// combine() and supported(): one table of kernels indexed by (dtype, op), so
// a call costs a bounds check and one indirect call. An empty entry is an op
// the dtype does not define. The table is built on first use, when the
// float16 row can be picked for this CPU.
#include "reduce/reduce.h"

#include <array>
#include <cstdint>

#include "common/dtype.h"
#include "common/error.h"
#include "reduce/aligned_blocks.h"
#include "reduce/kernels.h"
#include "reduce/ops.h"

namespace comm::reduce {
namespace {

constexpr size_t kDtypeCount = COMM_BOOL + 1;
constexpr size_t kOpCount = COMM_OP_BXOR + 1;

using Row = std::array<CombineFn, kOpCount>;
using Table = std::array<Row, kDtypeCount>;

// Rows list the ops in comm_op_t order: sum, prod, min, max, avg, band, bor,
// bxor. AVG combines like SUM; finishAverage divides at the end. The rows
// and the table are laid out by hand, as tables.
// clang-format off
template <class T>
constexpr Row integerRow() {
  return {combineArrays<T, Sum>,   combineArrays<T, Prod>, combineArrays<T, Min>,
          combineArrays<T, Max>,   combineArrays<T, Sum>,  combineArrays<T, BitAnd>,
          combineArrays<T, BitOr>, combineArrays<T, BitXor>};
}

template <class T>
constexpr Row floatRow() {
  return {combineArrays<T, Sum>, combineArrays<T, Prod>, combineArrays<T, Min>,
          combineArrays<T, Max>, combineArrays<T, Sum>,  nullptr, nullptr, nullptr};
}

constexpr Row bfloat16Row() {
  using Bits = uint16_t;
  return {combineArrays<Bits, InFloat32<BFloat16, Sum>>, combineArrays<Bits, InFloat32<BFloat16, Prod>>,
          combineArrays<Bits, InFloat32<BFloat16, Min>>, combineArrays<Bits, InFloat32<BFloat16, Max>>,
          combineArrays<Bits, InFloat32<BFloat16, Sum>>, nullptr, nullptr, nullptr};
}

Row float16Row(Float16Isa isa) {
  return {float16Kernel<Sum>(isa), float16Kernel<Prod>(isa), float16Kernel<Min>(isa),
          float16Kernel<Max>(isa), float16Kernel<Sum>(isa),  nullptr, nullptr, nullptr};
}

// bool: sum, max and bor are "or"; prod, min and band are "and" (as in
// PyTorch). No avg: the mean of bools is no bool, and "or" would pass for
// one silently.
constexpr Row boolRow() {
  return {combineArrays<uint8_t, LogicalOr>,  combineArrays<uint8_t, LogicalAnd>,
          combineArrays<uint8_t, LogicalAnd>, combineArrays<uint8_t, LogicalOr>,
          nullptr,                            combineArrays<uint8_t, LogicalAnd>,
          combineArrays<uint8_t, LogicalOr>,  combineArrays<uint8_t, LogicalXor>};
}

// In comm_dtype_t order.
const Table& kernels() {
  static const Table table = {
      integerRow<int8_t>(),  integerRow<uint8_t>(),  integerRow<int16_t>(),
      integerRow<uint16_t>(), integerRow<int32_t>(), integerRow<uint32_t>(),
      integerRow<int64_t>(), integerRow<uint64_t>(), float16Row(float16Converter().isa),
      bfloat16Row(),         floatRow<float>(),      floatRow<double>(),
      boolRow()};
  return table;
}
// clang-format on

}  // namespace

bool supported(comm_dtype_t dtype, comm_op_t op) {
  auto d = static_cast<size_t>(dtype);
  auto o = static_cast<size_t>(op);
  return d < kDtypeCount && o < kOpCount && kernels()[d][o] != nullptr;
}

void combine(void* out, const void* a, const void* b, size_t count, comm_dtype_t dtype, comm_op_t op) {
  if (!supported(dtype, op)) {
    fail(validDtype(dtype) && validOp(op) ? COMM_ERR_NOT_SUPPORTED : COMM_ERR_INVALID_ARGUMENT,
         "reduce::combine: op {} ({}) is not defined for dtype {} ({})", opName(op), int(op), dtypeName(dtype),
         int(dtype));
  }
  const CombineFn kernel = kernels()[dtype][op];
  const size_t elementSize = dtypeSize(dtype);
  if (alignedTo(elementSize, {out, a, b})) return kernel(out, a, b, count);
  throughAlignedBlocks<2>(out, {a, b}, count, elementSize,
                          [&](auto& blocks, size_t elements) { kernel(blocks[0], blocks[0], blocks[1], elements); });
}

}  // namespace comm::reduce
