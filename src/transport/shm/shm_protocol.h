// What the ranks of one node say to each other through comm's direct
// shared-memory rings (channel.h): every message starts a slot with a
// ShmSlot header, its payload after it.
//
// The handshake, in the words of matching_engine.h: a message that fits a
// slot goes whole (kEager). A larger one is announced (kRequestToSend,
// carrying where it lies in the sender's memory); once a receive matches
// it, the receiver either answers kClearToSend and takes the message as
// slot-sized kChunks streamed by the sender, or reads it straight out of
// the sender's memory by Cross-Memory Attach and answers kFinish, which
// ends the sender's part (ShmMode says which). A receive that meets a
// message of another size answers kFinish too: the sender's part is over.
// Operations are named to the peer by token (ShmOp::token()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace comm::transport {

enum class ShmKind : uint32_t {
  kEager = 1,      // tag, size, payload: the whole message
  kRequestToSend,  // tag, size, ShmRendezvous payload: a message too large for a slot
  kClearToSend,    // token = the sender's operation, ShmClearToSend payload: stream it
  kChunk,          // token = the receiver's operation, size, payload: the next piece
  kFinish,         // token = the sender's operation, status: the receiver has it
};

struct ShmSlot {
  std::atomic<uint64_t> sequence;  // position + 1 once the producer has filled the slot
  uint64_t tagOrToken;             // the message's tag, or the operation a control message is about
  uint64_t size;
  ShmKind kind;
  int32_t status;
};
static_assert(sizeof(ShmSlot) == 32 && std::atomic<uint64_t>::is_always_lock_free);

// The largest message (or chunk) one slot of `slotBytes` carries.
constexpr size_t shmSlotPayload(size_t slotBytes) { return slotBytes - sizeof(ShmSlot); }

struct ShmRendezvous {
  uint64_t senderToken;  // echoed in kClearToSend / kFinish
  uint64_t address;      // the message in the sender's address space
};

struct ShmClearToSend {
  uint64_t receiverToken;  // carried by every kChunk of the message
};

inline char* shmPayload(ShmSlot* slot) { return reinterpret_cast<char*>(slot + 1); }
inline const char* shmPayload(const ShmSlot* slot) { return reinterpret_cast<const char*>(slot + 1); }

}  // namespace comm::transport
