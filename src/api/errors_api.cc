// Status strings, last error, dtype and op names.
#include <string>

#include "api/guard.h"
#include "comm.h"
#include "common/dtype.h"

namespace comm::api {
namespace {

thread_local std::string lastError;

}  // namespace

void setLastError(const char* call, comm_status_t status, const std::string& message) {
  // Engine messages that already name a comm_ call keep their own prefix.
  if (message.rfind("comm_", 0) == 0) {
    lastError = message;
  } else {
    lastError = std::string(call) + ": " + message;
  }
  (void)status;
}

}  // namespace comm::api

extern "C" {

COMM_API const char* comm_status_string(comm_status_t status) {
  switch (status) {
    case COMM_OK: return "success";
    case COMM_IN_PROGRESS: return "in progress";
    case COMM_ERR_INVALID_ARGUMENT: return "invalid argument";
    case COMM_ERR_INVALID_USAGE: return "invalid usage";
    case COMM_ERR_NOT_SUPPORTED: return "not supported";
    case COMM_ERR_NO_MEMORY: return "out of memory";
    case COMM_ERR_TIMEOUT: return "timed out";
    case COMM_ERR_REMOTE: return "remote failure";
    case COMM_ERR_MISMATCH: return "mismatch between ranks";
    case COMM_ERR_ABORTED: return "aborted";
    case COMM_ERR_TRANSPORT: return "transport failure";
    case COMM_ERR_BOOTSTRAP: return "bootstrap failure";
    case COMM_ERR_INTERNAL: return "internal error";
    case COMM_ERR_REVOKED: return "revoked";
  }
  return "unknown status";
}

COMM_API const char* comm_last_error(void) { return comm::api::lastError.c_str(); }

COMM_API size_t comm_dtype_size(comm_dtype_t dtype) { return comm::dtypeSize(dtype); }
COMM_API const char* comm_dtype_name(comm_dtype_t dtype) { return comm::dtypeName(dtype); }
COMM_API const char* comm_op_name(comm_op_t op) { return comm::opName(op); }

}  // extern "C"
