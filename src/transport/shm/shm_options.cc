// The "shm" setting read into a ShmMode (shm_options.h).
#include "transport/shm/shm_options.h"

#include "common/error.h"

namespace comm::transport {

ShmMode parseShmMode(std::string_view value) {
  if (value == "1") return ShmMode::kAuto;
  if (value == "0") return ShmMode::kOff;
  if (value == "attach") return ShmMode::kAttach;
  if (value == "copy") return ShmMode::kCopy;
  fail(COMM_ERR_INVALID_ARGUMENT, "COMM_SHM='{}' is not 1, 0, attach or copy", value);
}

}  // namespace comm::transport
