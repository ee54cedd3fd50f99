// Fuzz target: what a client that proved the secret sends the store, as
// the server reads it (bootstrap/store_protocol.h): a stream of frames, each
// a request, decoded against the default limits. Nothing may crash, hang or
// read past the input, and a request that decodes stays within the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace comm::bootstrap;
  const StoreLimits limits;
  const size_t frameLimit = limits.maxKeyBytes + limits.maxValueBytes + 64;
  const std::string_view stream(reinterpret_cast<const char*>(data), size);
  size_t consumed = 0;
  try {
    while (std::optional<uint32_t> body = completeFrame(stream.substr(consumed), frameLimit)) {
      if (*body > frameLimit || kFrameHeaderBytes + *body > stream.size() - consumed) std::abort();
      StoreRequest request =
          decodeRequest(stream.substr(consumed + kFrameHeaderBytes, *body), limits.maxKeyBytes, limits.maxValueBytes);
      if (request.value.size() > limits.maxValueBytes) std::abort();
      for (const std::string& key : request.keys) {
        if (key.size() > limits.maxKeyBytes) std::abort();
      }
      if (request.op != StoreOp::kWait && request.keys.size() != 1) std::abort();
      consumed += kFrameHeaderBytes + *body;
    }
  } catch (const comm::Error& error) {
    if (error.status() != COMM_ERR_BOOTSTRAP) std::abort();
  }
  return 0;
}
