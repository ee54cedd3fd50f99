// Facts about dtypes and reduce ops that every layer needs.
#pragma once

#include <cstddef>

#include "comm.h"

namespace comm {

bool validDtype(comm_dtype_t dtype);
bool validOp(comm_op_t op);
size_t dtypeSize(comm_dtype_t dtype);    // 0 for an unknown dtype
const char* dtypeName(comm_dtype_t dtype);  // "unknown" for an unknown dtype
const char* opName(comm_op_t op);           // "unknown" for an unknown op

}  // namespace comm
