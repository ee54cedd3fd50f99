#include "core/dtype.h"

namespace comm {
namespace {

struct DtypeInfo {
  size_t size;
  const char* name;
};

// Indexed by comm_dtype_t, whose values are pinned in comm.h.
constexpr DtypeInfo kDtypes[] = {
    {1, "int8"},    {1, "uint8"},   {2, "int16"},    {2, "uint16"},   {4, "int32"},
    {4, "uint32"},  {8, "int64"},   {8, "uint64"},   {2, "float16"},  {2, "bfloat16"},
    {4, "float32"}, {8, "float64"}, {1, "bool"},
};
constexpr int kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);

constexpr const char* kOpNames[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
constexpr int kOpCount = sizeof(kOpNames) / sizeof(kOpNames[0]);

}  // namespace

bool validDtype(comm_dtype_t dtype) { return dtype >= 0 && dtype < kDtypeCount; }
bool validOp(comm_op_t op) { return op >= 0 && op < kOpCount; }
size_t dtypeSize(comm_dtype_t dtype) { return validDtype(dtype) ? kDtypes[dtype].size : 0; }
const char* dtypeName(comm_dtype_t dtype) { return validDtype(dtype) ? kDtypes[dtype].name : "unknown"; }
const char* opName(comm_op_t op) { return validOp(op) ? kOpNames[op] : "unknown"; }

}  // namespace comm
