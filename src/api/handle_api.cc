// comm_handle_wait, comm_handle_test, comm_handle_destroy.
#include "api/guard.h"
#include "api/objects.h"

using comm::fail;
using comm::api::guard;

namespace {

comm_status_t statusOf(const char* call, comm_handle_t* handle, bool waitForIt, int64_t timeoutMs) {
  comm_status_t result = COMM_OK;
  comm_status_t checked = guard(call, [&] {
    comm::api::liveHandles().check(handle, "handle", "handle");
    if (waitForIt && timeoutMs < 0 && timeoutMs != COMM_TIMEOUT_DEFAULT) {
      fail(COMM_ERR_INVALID_ARGUMENT, "timeout_ms {} is negative (COMM_TIMEOUT_DEFAULT is -1)", timeoutMs);
    }
    if (!handle->operation) return;
    comm::core::Operation& op = *handle->operation;
    if (waitForIt) {
      comm::Deadline deadline = timeoutMs == COMM_TIMEOUT_DEFAULT
                                    ? comm::Deadline::never()
                                    : comm::Deadline(std::chrono::milliseconds(timeoutMs));
      result = op.wait(deadline);
    } else {
      result = op.test();
    }
    if (result != COMM_OK && result != COMM_IN_PROGRESS) throw comm::Error(result, op.message());
  });
  return checked != COMM_OK ? checked : result;
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_handle_wait(comm_handle_t* handle, int64_t timeout_ms) {
  return statusOf("comm_handle_wait", handle, true, timeout_ms);
}

COMM_API comm_status_t comm_handle_test(comm_handle_t* handle) {
  return statusOf("comm_handle_test", handle, false, 0);
}

COMM_API comm_status_t comm_handle_destroy(comm_handle_t* handle) {
  return guard("comm_handle_destroy", [&] {
    if (handle == nullptr) return;
    if (!comm::api::liveHandles().remove(handle)) {
      fail(COMM_ERR_INVALID_USAGE, "handle {} was destroyed before or never created", static_cast<void*>(handle));
    }
    // Buffers must never be written after destroy returns: finish the operation first.
    if (handle->operation) handle->operation->wait(comm::Deadline::never());
    delete handle;
  });
}

}  // extern "C"
