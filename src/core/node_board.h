// The board of a communicator whose ranks all share one node and reach each
// other over the direct shared-memory transport: one shared segment where,
// for every collective, each rank publishes its signature and, when the
// collective is small, its whole input. A small collective then costs one
// publication and one look at each peer's entry instead of messages through
// the transport, and every rank checks every rank's signature (not only its
// neighbour's), so every rank of a mismatched collective sees the mismatch.
//
// Each rank has two entries and uses them alternately. Rank r may overwrite
// the entry of collective s - 2 when it starts s: it finished s - 1, which
// needed every rank to publish s - 1, and a rank publishes s - 1 only after
// it is done reading everybody's s - 2. So every collective of a
// communicator with a board, whatever path its data takes, waits until every
// rank has published it before it returns (CollectiveContext::finish).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/signature.h"
#include "transport/shm_segment.h"

namespace comm::core {

class World;

class NodeBoard {
 public:
  // What one entry carries besides the signature; sized for the latency-
  // bound collectives, where the transport's per-message cost dominates.
  static constexpr size_t kPayloadBytes = 4096;
  // An entry's payload size when the rank put no payload there.
  static constexpr uint32_t kNoPayload = UINT32_MAX;

  // The board of communicator `id` (members `worldRanks`, this rank being
  // `rank`), or null when it has fewer than 2 ranks or some member is not on
  // this node behind the direct shared-memory transport. Member 0 creates
  // the segment and publishes its name through the store; the others map it.
  // Throws comm::Error naming the cause when the segment cannot be made.
  static std::unique_ptr<NodeBoard> join(World& world, uint16_t id, const std::vector<int>& worldRanks, int rank);

  // This rank's payload area (kPayloadBytes) for collective `sequence`.
  char* ownPayload(uint32_t sequence) { return payloadOf(entry(rank_, sequence)); }
  // Makes this rank's `signature` and the first `payloadBytes` of its
  // payload area (or kNoPayload) visible to the others for `sequence`.
  void publish(uint32_t sequence, const Signature& signature, uint32_t payloadBytes);

  // Whether `rank` has published `sequence`; only then may the accessors
  // below be asked about it (for that sequence).
  bool published(int rank, uint32_t sequence) const {
    return entry(rank, sequence)->published.load(std::memory_order_acquire) == sequence + 1;
  }
  const Signature& signature(int rank, uint32_t sequence) const { return entry(rank, sequence)->signature; }
  uint32_t payloadBytes(int rank, uint32_t sequence) const { return entry(rank, sequence)->payloadBytes; }
  const char* payload(int rank, uint32_t sequence) const { return payloadOf(entry(rank, sequence)); }

 private:
  // The payload follows the header directly, so the signature and the first
  // 24 bytes of payload share one cache line.
  struct EntryHeader {
    std::atomic<uint32_t> published;  // the sequence it holds + 1 (0: none yet)
    uint32_t payloadBytes;
    Signature signature;
  };
  static_assert(sizeof(EntryHeader) == 40, "the payload should start in the entry's first cache line");
  // Entries start on 128-byte boundaries: adjacent-line prefetch never couples two of them.
  static constexpr size_t kAlign = 128;
  static constexpr size_t kEntryBytes = (sizeof(EntryHeader) + kPayloadBytes + kAlign - 1) / kAlign * kAlign;
  static constexpr size_t kEntriesPerRank = 2;

  NodeBoard(transport::ShmSegment segment, int rank);
  // Inline: waits call it in their polling loop.
  EntryHeader* entry(int rank, uint32_t sequence) const {
    const size_t index = static_cast<size_t>(rank) * kEntriesPerRank + sequence % kEntriesPerRank;
    return reinterpret_cast<EntryHeader*>(entries_ + index * kEntryBytes);
  }
  static char* payloadOf(EntryHeader* e) { return reinterpret_cast<char*>(e + 1); }

  transport::ShmSegment segment_;
  char* entries_;  // in segment_, after its header
  int rank_;
};

}  // namespace comm::core
