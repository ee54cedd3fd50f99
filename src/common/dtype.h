// Facts about dtypes and reduce ops that every layer needs.
#pragma once

#include <cstddef>

#include "comm.h"

namespace comm {

namespace detail {

struct DtypeInfo {
  size_t size;
  const char* name;
};

// Indexed by comm_dtype_t, whose values are pinned in comm.h. In the header:
// small collectives size their data on every call.
inline constexpr DtypeInfo kDtypes[] = {
    {1, "int8"},   {1, "uint8"},   {2, "int16"},    {2, "uint16"},  {4, "int32"},   {4, "uint32"}, {8, "int64"},
    {8, "uint64"}, {2, "float16"}, {2, "bfloat16"}, {4, "float32"}, {8, "float64"}, {1, "bool"},
};
inline constexpr int kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);

constexpr size_t largestDtypeBytes() {
  size_t largest = 0;
  for (const DtypeInfo& d : kDtypes) largest = d.size > largest ? d.size : largest;
  return largest;
}

}  // namespace detail

// The size of the largest dtype's element.
inline constexpr size_t kLargestDtypeBytes = detail::largestDtypeBytes();

inline bool validDtype(comm_dtype_t dtype) { return dtype >= 0 && dtype < detail::kDtypeCount; }
bool validOp(comm_op_t op);
// 0 for an unknown dtype.
inline size_t dtypeSize(comm_dtype_t dtype) { return validDtype(dtype) ? detail::kDtypes[dtype].size : 0; }
const char* dtypeName(comm_dtype_t dtype);  // "unknown" for an unknown dtype
const char* opName(comm_op_t op);           // "unknown" for an unknown op

}  // namespace comm
