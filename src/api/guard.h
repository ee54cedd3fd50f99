// The boundary between C callers and the C++ engine: every extern "C"
// function runs its body through guard(), which turns any exception into a
// status and the thread-local last-error message.
#pragma once

#include <new>
#include <string>
#include <utility>

#include "api/call_scope.h"
#include "comm.h"
#include "common/error.h"

namespace comm::api {

void setLastError(const char* call, comm_status_t status, const std::string& message);

template <typename Body>
comm_status_t guard(const char* call, Body&& body) noexcept {
  CallScope scope;
  try {
    body();
    return COMM_OK;
  } catch (const Error& e) {
    setLastError(call, e.status(), e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    setLastError(call, COMM_ERR_NO_MEMORY, "out of memory");
    return COMM_ERR_NO_MEMORY;
  } catch (const std::exception& e) {
    setLastError(call, COMM_ERR_INTERNAL, std::string("internal error: ") + e.what());
    return COMM_ERR_INTERNAL;
  } catch (...) {
    setLastError(call, COMM_ERR_INTERNAL, "internal error: unknown exception");
    return COMM_ERR_INTERNAL;
  }
}

// guard() for a call with a pointer out-parameter (an object, handle, string
// or data pointer): *out is NULL unless the call succeeds, as comm.h
// promises, so a caller that ignores the status holds no stale pointer.
template <typename T, typename Body>
comm_status_t guardOut(const char* call, T** out, Body&& body) noexcept {
  if (out != nullptr) *out = nullptr;
  return guard(call, std::forward<Body>(body));
}

// Throw INVALID_ARGUMENT naming `name` when `pointer` is NULL.
template <typename T>
T* require(T* pointer, const char* name) {
  if (pointer == nullptr) fail(COMM_ERR_INVALID_ARGUMENT, "{} is NULL", name);
  return pointer;
}

}  // namespace comm::api
