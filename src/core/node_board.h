// The board of a communicator whose ranks all share one node and reach each
// other over the direct shared-memory transport: one shared segment where,
// for every collective, each rank publishes its signature and, when the
// collective is small, its whole input. A small collective then costs one
// publication and one look at each peer's entry instead of messages through
// the transport, and every rank checks every rank's signature (not only its
// neighbour's), so every rank of a mismatched collective sees the mismatch.
//
// Each rank has kEntriesPerRank entries in each of two lanes (see Lane) and
// uses them in turn: collective s goes to entry s % kEntriesPerRank of the
// lane its signature picks. Rank r may overwrite its entry of collective
// s - kEntriesPerRank when it starts s only once every rank has started
// s - kEntriesPerRank + 1: a rank starts a collective after it is done
// reading the entries of the one before. That check
// (BoardSession::awaitReuse) is the only flow control, so a rank that
// only gives (a broadcast root, a gather leaf) publishes and leaves, and may
// run up to kEntriesPerRank - 1 collectives ahead of the others; once held
// up, it waits until they are at most kEntriesPerRank / 2 behind. Whatever
// lane a collective takes, its rank also stamps the narrow lane's entry of
// that index, so the narrow lane alone tells how far a rank has got.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/dtype.h"
#include "common/shm_segment.h"
#include "core/prefetch.h"
#include "core/signature.h"

namespace comm::core {

class World;

// Where a collective's entries lie. The lanes differ in layout because the
// collectives differ in who waits for whom:
//  - wide: entries of kPayloadBytes, each on pages of its own, so that no
//    hardware prefetcher pulls a peer's next entry before the peer has
//    written it. Collectives where every rank reads every other's entry as
//    soon as it is out (all_reduce, all_gather, ...) run in step, and such a
//    premature copy makes the writer's next store wait (all_reduce of 8 B
//    is markedly slower with its entries on consecutive lines).
//  - narrow: one cache line per entry, kNarrowPayloadBytes of payload, all
//    of a rank's entries on consecutive lines. Rooted collectives of a few
//    bytes (broadcast, reduce, gather, scatter) have givers that run ahead;
//    whoever reads their entries reads a run of finished lines, which the
//    hardware prefetchers then stream, so more launches of a rooted 8 B
//    collective settle at the fastest rate than with wide entries.
enum class Lane : uint32_t { kWide = 0, kNarrow = 1 };
constexpr Lane otherLane(Lane lane) { return lane == Lane::kWide ? Lane::kNarrow : Lane::kWide; }

class NodeBoard {
 public:
  // What one entry carries besides the signature; sized for the latency-
  // bound collectives, where the transport's per-message cost dominates.
  static constexpr size_t kPayloadBytes = 4096;
  // A narrow entry's payload: one cache line with the header.
  static constexpr size_t kNarrowPayloadBytes = 16;
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

  // The lane of collective `signature` on a board of `size` ranks; the
  // same on every rank that agrees on the signature.
  static Lane laneOf(const Signature& signature, int size) {
    constexpr uint32_t kRooted =
        1u << static_cast<uint32_t>(CollectiveKind::kBroadcast) | 1u << static_cast<uint32_t>(CollectiveKind::kReduce) |
        1u << static_cast<uint32_t>(CollectiveKind::kGather) | 1u << static_cast<uint32_t>(CollectiveKind::kScatter);
    if ((kRooted >> signature.kind & 1) == 0) return Lane::kWide;
    return narrowFits(signature, size) ? Lane::kNarrow : Lane::kWide;
  }

  // This rank's payload area in `lane` (kPayloadBytes or
  // kNarrowPayloadBytes) for collective `sequence`.
  char* ownPayload(Lane lane, uint32_t sequence) { return payloadOf(entry(lane, rank_, sequence)); }
  // Makes this rank's `signature` and the first `payloadBytes` of its
  // payload area (or kNoPayload) visible to the others for `sequence`.
  void publish(Lane lane, uint32_t sequence, const Signature& signature, uint32_t payloadBytes) {
    EntryHeader* e = entry(lane, rank_, sequence);
    e->payloadBytes = payloadBytes;
    e->signature = signature;
    // The narrow entry also tells how far its rank has got (started()),
    // whatever the lane. Its line is read only by a rank held up there, so
    // this store normally hits.
    progressOf(rank_, sequence)->store(sequence + 1, std::memory_order_release);
    e->published.store(sequence + 1, std::memory_order_release);
  }

  // Whether `rank` has published `sequence` in `lane`; only then may the
  // accessors below be asked about it (for that sequence and lane).
  bool published(Lane lane, int rank, uint32_t sequence) const {
    return entry(lane, rank, sequence)->published.load(std::memory_order_acquire) == sequence + 1;
  }
  // Whether `rank` has published `sequence` in the other lane: it disagrees.
  bool publishedElsewhere(Lane lane, int rank, uint32_t sequence) const {
    return published(otherLane(lane), rank, sequence);
  }
  // Whether `rank` has published `sequence` or a later collective, in any
  // lane. Sequences wrap: an entry holds values that grow by kEntriesPerRank.
  bool started(int rank, uint32_t sequence) const {
    return static_cast<int32_t>(progressOf(rank, sequence)->load(std::memory_order_acquire) - (sequence + 1)) >= 0;
  }
  // Starts moving the lines the next collectives will touch while this rank
  // is between collectives, so that they do not stall the next one.
  //  - This rank's own next entry is taken exclusive even while a slower
  //    peer may still read what it held: the store that publishes there
  //    then does not wait for that peer's copy to be invalidated, a wait
  //    that would hold every later store (and the next lock) behind it.
  //    Two entries ahead helped rooted collectives on some hosts but slowed
  //    them badly on others, and slowed all_reduce
  //    (docs/dev/performance-history.md).
  //  - Peers' entries are loaded kReadAhead collectives ahead only when
  //    `peersAhead` (they had published this collective before this rank
  //    looked): an entry loaded before its owner writes it only makes the
  //    owner's store invalidate it.
  //  Both in `lane`, the likely lane of the next collectives.
  void prefetchNext(Lane lane, uint32_t sequence, int size, bool peersAhead) const {
    prefetchForWrite(entry(lane, rank_, sequence + 1));
    if (!peersAhead) return;
    for (int r = 0; r < size; ++r) {
      if (r == rank_) continue;
      for (uint32_t k = 1; k <= kReadAhead; ++k) prefetchForRead(entry(lane, r, sequence + k));
    }
  }
  // This rank's record of a sequence every rank is known to have started.
  bool knownAllStarted(uint32_t sequence) const { return static_cast<int32_t>(sequence - allStarted_) <= 0; }
  void noteAllStarted(uint32_t sequence) {
    if (!knownAllStarted(sequence)) allStarted_ = sequence;
  }
  const Signature& signature(Lane lane, int rank, uint32_t sequence) const {
    return entry(lane, rank, sequence)->signature;
  }
  uint32_t payloadBytes(Lane lane, int rank, uint32_t sequence) const {
    return entry(lane, rank, sequence)->payloadBytes;
  }
  const char* payload(Lane lane, int rank, uint32_t sequence) const { return payloadOf(entry(lane, rank, sequence)); }

 private:
  // The payload follows the header directly, so the signature and the first
  // 24 bytes of payload share one cache line: a wide all_to_all of 8 B at 2
  // ranks reads 20 bytes of entry, and a second line per entry made it
  // markedly slower.
  struct EntryHeader {
    std::atomic<uint32_t> published;  // the sequence it holds + 1 (0: none yet)
    uint32_t payloadBytes;
    Signature signature;
  };
  static_assert(sizeof(EntryHeader) == 40, "a wide entry's payload should start in its first cache line");
  // A narrow entry: the header, kNarrowPayloadBytes of payload, and its
  // rank's progress: the latest sequence + 1 it published, in either lane.
  static constexpr size_t kNarrowEntryBytes = 64;
  static constexpr size_t kProgressOffset = sizeof(EntryHeader) + kNarrowPayloadBytes;
  static_assert(kProgressOffset + sizeof(std::atomic<uint32_t>) <= kNarrowEntryBytes);
  std::atomic<uint32_t>* progressOf(int rank, uint32_t sequence) const {
    return reinterpret_cast<std::atomic<uint32_t>*>(reinterpret_cast<char*>(entry(Lane::kNarrow, rank, sequence)) +
                                                    kProgressOffset);
  }
  // Wide entries start on 128-byte boundaries: adjacent-line prefetch never couples two of them.
  static constexpr size_t kWideAlign = 128;
  static constexpr size_t wideEntryBytes(size_t payloadBytes) {
    return (sizeof(EntryHeader) + payloadBytes + kWideAlign - 1) / kWideAlign * kWideAlign;
  }
  // Whether every rank's payload of this rooted collective fits a narrow
  // entry: what the rank that publishes most puts there (a scatter root its
  // whole input, everyone else one block) is at most kNarrowElements
  // elements. Counted in elements of any dtype, without looking the dtype
  // up: every collective asks, and givers run ahead only while each of
  // their calls stays short (docs/dev/performance-history.md).
  static constexpr uint64_t kNarrowElements = kNarrowPayloadBytes / kLargestDtypeBytes;
  static bool narrowFits(const Signature& signature, int size) {
    const uint64_t count = static_cast<uint64_t>(signature.count);  // negative: never narrow
    const uint64_t ranks = signature.kind == static_cast<uint32_t>(CollectiveKind::kScatter) ? size : 1;
    return count <= kNarrowElements && count * ranks <= kNarrowElements;
  }
  NodeBoard(ShmSegment segment, size_t wideEntryBytes, int members, int rank);
  // Touches the pages this rank will use once, at set-up (see
  // touchForRead): the first 16 collectives would pay for it.
  void touchPages();
  // Inline: waits call it in their polling loop.
  EntryHeader* entry(Lane lane, int rank, uint32_t sequence) const {
    const size_t index = static_cast<size_t>(rank) * kEntriesPerRank + sequence % kEntriesPerRank;
    const LaneArea& area = lanes_[static_cast<size_t>(lane)];
    return reinterpret_cast<EntryHeader*>(area.entries + index * area.entryBytes);
  }
  static char* payloadOf(EntryHeader* e) { return reinterpret_cast<char*>(e + 1); }

  struct LaneArea {
    char* entries;  // in segment_
    size_t entryBytes;
  };

  ShmSegment segment_;
  LaneArea lanes_[2];  // indexed by Lane
  int rank_;
  uint32_t allStarted_ = UINT32_MAX;  // sequence -1: vacuously started
};

}  // namespace comm::core
