// The board of a communicator whose ranks all share one node and reach each
// other over the direct shared-memory transport: one shared segment where,
// for every collective, each rank publishes its signature and, when the
// collective is small, its whole input. A small collective then costs one
// publication and one look at each peer's entry instead of messages through
// the transport, and every rank checks every rank's signature (not only its
// neighbour's), so every rank of a mismatched collective sees the mismatch.
//
// Each rank has kEntriesPerRank entries and uses them in turn. Rank r may
// overwrite the entry of collective s - kEntriesPerRank when it starts s
// only once every rank has started s - kEntriesPerRank + 1: a rank starts a
// collective after it is done reading the entries of the one before. That
// check (CollectiveContext::awaitReuse) is the only flow control, so a rank
// that only gives (a broadcast root, a gather leaf) publishes and leaves,
// and may run up to kEntriesPerRank - 1 collectives ahead of the others;
// once held up, it waits until they are at most kEntriesPerRank / 2 behind.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/prefetch.h"
#include "core/signature.h"
#include "transport/shm_segment.h"

namespace comm::core {

class World;

class NodeBoard {
 public:
  // What one entry carries besides the signature; sized for the latency-
  // bound collectives, where the transport's per-message cost dominates.
  static constexpr size_t kPayloadBytes = 4096;
  // Entries carry payload only on boards of at most this many ranks: past
  // it, reading every peer's entry costs more than the rounds of messages
  // it saves, and the board holds signatures alone.
  static constexpr int kPayloadRanks = 16;
  // How far a rank that does not wait may run ahead (see above); a power of
  // two, so entries stay in turn when sequences wrap.
  static constexpr uint32_t kEntriesPerRank = 16;
  static_assert((kEntriesPerRank & (kEntriesPerRank - 1)) == 0);
  // How many collectives ahead a rank that runs behind its peers loads their entries.
  static constexpr uint32_t kReadAhead = 2;
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
  void publish(uint32_t sequence, const Signature& signature, uint32_t payloadBytes) {
    EntryHeader* e = entry(rank_, sequence);
    e->payloadBytes = payloadBytes;
    e->signature = signature;
    e->published.store(sequence + 1, std::memory_order_release);
  }

  // Whether `rank` has published `sequence`; only then may the accessors
  // below be asked about it (for that sequence).
  bool published(int rank, uint32_t sequence) const {
    return entry(rank, sequence)->published.load(std::memory_order_acquire) == sequence + 1;
  }
  // Whether `rank` has published `sequence` or a later collective.
  // Sequences wrap: an entry holds values that grow by kEntriesPerRank.
  bool started(int rank, uint32_t sequence) const {
    return static_cast<int32_t>(entry(rank, sequence)->published.load(std::memory_order_acquire) - (sequence + 1)) >= 0;
  }
  // Starts moving the lines the next collectives will touch while this rank
  // is between collectives, so that they do not stall the next one.
  //  - This rank's own next entry is taken exclusive even while a slower
  //    peer may still read what it held: the store that publishes there
  //    then does not wait for that peer's copy to be invalidated, a wait
  //    that would hold every later store (and the next lock) behind it.
  //    Two entries ahead was faster for rooted collectives on some hosts,
  //    three times slower on others and for all_reduce (docs/performance.md).
  //  - Peers' entries are loaded kReadAhead collectives ahead only when
  //    `peersAhead` (they had published this collective before this rank
  //    looked): an entry loaded before its owner writes it only makes the
  //    owner's store invalidate it.
  void prefetchNext(uint32_t sequence, int size, bool peersAhead) const {
    prefetchForWrite(entry(rank_, sequence + 1));
    if (!peersAhead) return;
    for (int r = 0; r < size; ++r) {
      if (r == rank_) continue;
      for (uint32_t k = 1; k <= kReadAhead; ++k) prefetchForRead(entry(r, sequence + k));
    }
  }
  // This rank's record of a sequence every rank is known to have started.
  bool knownAllStarted(uint32_t sequence) const { return static_cast<int32_t>(sequence - allStarted_) <= 0; }
  void noteAllStarted(uint32_t sequence) {
    if (!knownAllStarted(sequence)) allStarted_ = sequence;
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
  static constexpr size_t entryBytes(size_t payloadBytes) {
    return (sizeof(EntryHeader) + payloadBytes + kAlign - 1) / kAlign * kAlign;
  }
  NodeBoard(transport::ShmSegment segment, size_t entryBytes, int rank);
  // Inline: waits call it in their polling loop.
  EntryHeader* entry(int rank, uint32_t sequence) const {
    const size_t index = static_cast<size_t>(rank) * kEntriesPerRank + sequence % kEntriesPerRank;
    return reinterpret_cast<EntryHeader*>(entries_ + index * entryBytes_);
  }
  static char* payloadOf(EntryHeader* e) { return reinterpret_cast<char*>(e + 1); }

  transport::ShmSegment segment_;
  char* entries_;  // in segment_, after its header
  size_t entryBytes_;
  int rank_;
  uint32_t allStarted_ = UINT32_MAX;  // sequence -1: vacuously started
};

}  // namespace comm::core
