#include "common/dtype.h"

namespace comm {
namespace {

constexpr const char* kOpNames[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
constexpr int kOpCount = sizeof(kOpNames) / sizeof(kOpNames[0]);

}  // namespace

bool validOp(comm_op_t op) { return op >= 0 && op < kOpCount; }
const char* dtypeName(comm_dtype_t dtype) { return validDtype(dtype) ? detail::kDtypes[dtype].name : "unknown"; }
const char* opName(comm_op_t op) { return validOp(op) ? kOpNames[op] : "unknown"; }

}  // namespace comm
