// Layout of the 64-bit libfabric tag. Each communicator has its own id, so
// traffic of different communicators never matches; within a communicator,
// user messages, collective data, collective signatures and control messages
// are kept apart by kind, and collectives by their sequence number.
//
//   63........48 47..46 45........32 31.................0
//   comm id      kind   sequence     user tag / step
#pragma once

#include <cstdint>

namespace comm::tags {

enum class Kind : uint64_t { kUser = 0, kCollective = 1, kSignature = 2, kControl = 3 };

constexpr uint32_t kSequenceMask = 0x3fff;

constexpr uint64_t make(uint16_t commId, Kind kind, uint32_t sequence, uint32_t low) {
  return (static_cast<uint64_t>(commId) << 48) | (static_cast<uint64_t>(kind) << 46) |
         (static_cast<uint64_t>(sequence & kSequenceMask) << 32) | low;
}

}  // namespace comm::tags
