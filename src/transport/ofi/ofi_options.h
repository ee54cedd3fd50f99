// What the libfabric transport (ofi_transport.h) alone is created with; the
// provider, the interface and the store's address it shares with the other
// transports (transport/options.h).
#pragma once

#include <cstddef>

namespace comm::transport {

struct OfiOptions {
  // Largest piece one libfabric message carries; 0 means min(the provider's
  // maximum message size, 1 GiB). Tests lower it to exercise chunking.
  size_t maxChunkBytes = 0;
};

}  // namespace comm::transport
