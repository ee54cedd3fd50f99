// Errors inside the engine are exceptions of type comm::Error carrying a
// comm_status_t; src/api/ turns them into status codes and the thread-local
// message. Nothing below api/ returns status codes for failures.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "comm.h"

namespace comm {

class Error : public std::runtime_error {
 public:
  Error(comm_status_t status, const std::string& message) : std::runtime_error(message), status_(status) {}
  comm_status_t status() const noexcept { return status_; }

 private:
  comm_status_t status_;
};

// Throw an Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(comm_status_t status, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(status, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace comm
