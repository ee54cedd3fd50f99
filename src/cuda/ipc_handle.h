// A device buffer as another process on the node names it: the CUDA IPC
// handle of its allocation and where the buffer lies in it, as text that
// travels through the rendezvous store. Pure host logic, unit-tested without
// a GPU; cuda/ipc.h makes and opens the handles.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/deadline.h"

namespace comm::bootstrap {
class StoreClient;
}

namespace comm::cuda {

struct IpcHandle {
  // cudaIpcMemHandle_t's bytes (its size is fixed by the CUDA ABI).
  static constexpr size_t kHandleBytes = 64;
  std::array<uint8_t, kHandleBytes> handle{};
  uint64_t offset = 0;  // of the buffer from the allocation's start
  uint64_t bytes = 0;   // of the buffer
  int32_t device = 0;   // the exporting process's device ordinal
  int32_t pid = 0;      // the exporting process: CUDA refuses to open a handle in its own process

  bool operator==(const IpcHandle&) const = default;
};

// "cuda-ipc/1 <device> <pid> <offset> <bytes> <128 hex digits>".
std::string encode(const IpcHandle& handle);
// The inverse of encode; throws COMM_ERR_MISMATCH naming `from` for text
// that is not one (a peer of another version, or not comm).
IpcHandle decode(const std::string& text, const std::string& from);

// Every rank of `size` publishes its handle under `prefix` and reads the
// others'; element r of the result is rank r's (this rank's own included).
// Waits for each at most until `deadline` (COMM_ERR_TIMEOUT names the key).
std::vector<IpcHandle> exchangeIpcHandles(bootstrap::StoreClient& store, const std::string& prefix, int rank, int size,
                                          const IpcHandle& mine, Deadline deadline);

}  // namespace comm::cuda
