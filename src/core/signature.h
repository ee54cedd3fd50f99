// What every rank of one collective must agree on, and how to say it in an
// error message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace comm::core {

enum class CollectiveKind : uint32_t {
  kBarrier = 1,
  kAllReduce,
  kReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kGather,
  kScatter,
  kAllToAllSingle,
  kAllToAll,
  kAllGatherV,
  kReduceScatterV,
  kGatherV,
  kScatterV,
};

// Tables indexed by kind have this many rows (row 0 unused).
constexpr size_t kCollectiveKinds = static_cast<size_t>(CollectiveKind::kScatterV) + 1;

const char* collectiveName(CollectiveKind kind);
// The kind named `name` ("all_reduce"), if any.
std::optional<CollectiveKind> collectiveNamed(std::string_view name);

// What every rank of one collective must agree on. Fields a collective does
// not use stay at their defaults.
struct Signature {
  uint16_t kind = 0;
  uint16_t memory = 0;  // 1: the tensors are in CUDA device memory (kMemoryDevice)
  int32_t dtype = -1;
  int32_t op = -1;
  int32_t root = -1;
  int64_t count = -1;  // elements (or rows) that must agree
  uint64_t extra = 0;  // e.g. a hash of per-rank counts

  // Bytewise: one vector compare instead of a branch per field (there is
  // no padding; see the static_assert below).
  bool operator==(const Signature& other) const { return std::memcmp(this, &other, sizeof(Signature)) == 0; }
};

static_assert(sizeof(Signature) == 32 && std::has_unique_object_representations_v<Signature>,
              "Signature must have no padding: it is compared bytewise");

// Signature::memory of a collective on device tensors: every rank of it
// must use device memory (the device paths exchange device buffers).
inline constexpr uint16_t kMemoryDevice = 1;

// "all_reduce float32 x 1024 sum", "broadcast int8 x 7 root 2",
// "all_reduce float32 x 8 sum in device memory"
std::string describe(const Signature& signature);

// "comm_all_reduce (#12 on world)": collective number `sequence` of the
// communicator named `communicator`, the call the user made, for messages.
std::string describeCall(const Signature& signature, uint32_t sequence, std::string_view communicator);

}  // namespace comm::core
