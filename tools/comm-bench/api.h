// Owning handles for comm's opaque objects, and turning a failed comm call
// into an exception that names the call and carries comm_last_error().
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "comm.h"

namespace commbench {

struct CommDeleter {
  void operator()(comm_t* comm) const { comm_destroy(comm); }
  void operator()(comm_config_t* config) const { comm_config_destroy(config); }
  void operator()(comm_tensor_t* tensor) const { comm_tensor_destroy(tensor); }
  void operator()(comm_batch_t* batch) const { comm_batch_destroy(batch); }
  void operator()(comm_handle_t* handle) const { comm_handle_destroy(handle); }
};

template <class T>
using Owned = std::unique_ptr<T, CommDeleter>;

inline void check(comm_status_t status, const char* call) {
  if (status != COMM_OK) {
    throw std::runtime_error(std::string(call) + " failed (" + comm_status_string(status) + "): " + comm_last_error());
  }
}

}  // namespace commbench
