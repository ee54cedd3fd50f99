// One direction between two ranks on a node: a single-producer /
// single-consumer ring of fixed-size slots in shared memory. The producer
// fills a slot and then stamps its sequence (release); the consumer polls the
// stamp of the next slot (acquire), so a small message costs the consumer one
// cache line: stamp, header and the first bytes of payload share it. The
// consumer hands slots back through `consumed`, on a line of its own, which
// the producer rereads only when its cached copy says the ring is full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/shm_segment.h"
#include "transport/shm/shm_protocol.h"

namespace comm::transport {

inline constexpr size_t kShmCacheLine = 64;

// Slot size for a node of `localRanks` ranks, the same on all of them.
// Large slots stream large messages faster (fewer hand-overs per byte:
// 64 KiB streams far faster at 2 ranks than 16 KiB); nodes with many ranks
// take small ones, since every ordered pair of ranks has a ring. The extra
// two cache lines hold the header, so that a message of a power-of-two
// size, 64 KiB say, still goes in one slot: eagerly, without a handshake,
// which is most of a 64 KiB broadcast's cost.
constexpr size_t shmSlotBytes(size_t localRanks) {
  return (localRanks <= 8 ? size_t{64} << 10 : size_t{16} << 10) + 2 * kShmCacheLine;
}

// What the consumer writes; alone on its cache lines (two, so the adjacent
// line prefetcher does not pair it with the first slot).
struct alignas(2 * kShmCacheLine) ShmRingControl {
  std::atomic<uint64_t> consumed;
};

// Bytes one ring of `slots` slots of `slotBytes` takes in a segment.
constexpr size_t shmRingBytes(uint32_t slots, size_t slotBytes) {
  return sizeof(ShmRingControl) + size_t{slots} * slotBytes;
}

// A ring's layout as this process maps it. `slots` is a power of two.
class ShmRing {
 public:
  ShmRing() = default;
  ShmRing(void* ring, uint32_t slots, size_t slotBytes)
      : control_(static_cast<ShmRingControl*>(ring)),
        slots_(static_cast<char*>(ring) + sizeof(ShmRingControl)),
        mask_(slots - 1),
        slotBytes_(slotBytes) {}

 protected:
  ShmSlot* slot(uint64_t position) const {
    return reinterpret_cast<ShmSlot*>(slots_ + (position & mask_) * slotBytes_);
  }
  ShmRingControl* control_ = nullptr;
  char* slots_ = nullptr;
  uint64_t mask_ = 0;
  size_t slotBytes_ = 0;
};

class ShmProducer : public ShmRing {
 public:
  using ShmRing::ShmRing;

  // Writes every page of the slots' payloads once (see touchForWrite);
  // before the first claim(): they are this producer's until it publishes.
  void touch() {
    for (uint64_t s = 0; s <= mask_; ++s) touchForWrite(shmPayload(slot(s)), slotBytes_ - sizeof(ShmSlot));
  }

  // The next free slot, or nullptr while the ring is full. Fill it, then publish().
  ShmSlot* claim() {
    if (position_ - consumedSeen_ > mask_) {
      consumedSeen_ = control_->consumed.load(std::memory_order_acquire);
      if (position_ - consumedSeen_ > mask_) return nullptr;
    }
    return slot(position_);
  }
  void publish(ShmSlot* filled) {
    ++position_;
    filled->sequence.store(position_, std::memory_order_release);
  }

 private:
  uint64_t position_ = 0;
  uint64_t consumedSeen_ = 0;
};

class ShmConsumer : public ShmRing {
 public:
  using ShmRing::ShmRing;

  // Reads every page of the ring once (see touchForRead).
  void touch() const { touchForRead(control_, sizeof(ShmRingControl) + (mask_ + 1) * slotBytes_); }

  // The oldest filled slot, or nullptr while the ring is empty.
  const ShmSlot* peek() const {
    ShmSlot* next = slot(position_);
    return next->sequence.load(std::memory_order_acquire) == position_ + 1 ? next : nullptr;
  }
  // Gives the slot peek() returned back to the producer.
  void release() {
    ++position_;
    control_->consumed.store(position_, std::memory_order_release);
  }

 private:
  uint64_t position_ = 0;
};

}  // namespace comm::transport
