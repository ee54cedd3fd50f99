#include "core/node_board.h"

#include <unistd.h>

#include <fmt/format.h>

#include "common/backoff.h"
#include "common/error.h"
#include "core/world.h"

namespace comm::core {
namespace {

struct alignas(128) BoardHeader {
  // Members that have mapped the segment; the one that completes the count
  // removes its name.
  std::atomic<uint32_t> mapped;
};

void awaitMembers(World& world, uint16_t id, const std::vector<int>& worldRanks, const std::atomic<uint32_t>& mapped) {
  const Deadline deadline(world.timeout());
  auto allMapped = [&] { return mapped.load(std::memory_order_acquire) >= worldRanks.size(); };
  auto nothingToDo = [] { return false; };
  waitUntil(allMapped, nothingToDo, [&] {
    for (int w : worldRanks) {
      if (auto failure = world.peerFailure(w)) {
        fail(COMM_ERR_REMOTE, "shm: communicator {} lost a member before it mapped the node board: {}", id, *failure);
      }
    }
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "shm: only {} of the {} members of communicator {} mapped the node board within {} ms",
           mapped.load(), worldRanks.size(), id, world.timeout().count());
    }
  });
}

}  // namespace

NodeBoard::NodeBoard(ShmSegment segment, size_t wideEntryBytes, int members, int rank)
    : segment_(std::move(segment)), rank_(rank) {
  char* wide = static_cast<char*>(segment_.data()) + sizeof(BoardHeader);
  lanes_[static_cast<size_t>(Lane::kWide)] = {wide, wideEntryBytes};
  lanes_[static_cast<size_t>(Lane::kNarrow)] = {wide + members * kEntriesPerRank * wideEntryBytes, kNarrowEntryBytes};
}

std::unique_ptr<NodeBoard> NodeBoard::join(World& world, uint16_t id, const std::vector<int>& worldRanks, int rank) {
  const size_t members = worldRanks.size();
  if (members < 2) return nullptr;
  for (int w : worldRanks) {
    if (w == world.rank()) continue;
    if (!world.peer(w).sameNode || !world.transport().directSharedMemory(w)) return nullptr;
  }
  const size_t wideEntryBytes = NodeBoard::wideEntryBytes(members <= kPayloadRanks ? kPayloadBytes : 0);
  const size_t bytes = sizeof(BoardHeader) + members * kEntriesPerRank * (wideEntryBytes + kNarrowEntryBytes);
  // Under communicator_ids.h's keyPrefixes(id): erased when the id is freed.
  const std::string key = fmt::format("board/{}/segment", id);
  ShmSegment segment;
  if (rank == 0) {
    segment = ShmSegment::create(shmSegmentName(getpid(), randomShmNonce()), bytes);
    world.storeSet(key, segment.name());
  } else {
    segment = ShmSegment::open(
        world.storeGetFrom(key, worldRanks[0], fmt::format("the node board of communicator {}", id)), bytes,
        world.peer(worldRanks[0]).pid, fmt::format("rank 0 of communicator {} (world rank {})", id, worldRanks[0]),
        "store key " + key, world.timeout());
  }
  auto* header = static_cast<BoardHeader*>(segment.data());
  if (header->mapped.fetch_add(1, std::memory_order_acq_rel) + 1 == members) segment.unlink();
  // The creator stays until everyone has mapped it: a communicator destroyed
  // right away would otherwise take the name with it before the others open it.
  if (rank == 0) awaitMembers(world, id, worldRanks, header->mapped);
  std::unique_ptr<NodeBoard> board(new NodeBoard(std::move(segment), wideEntryBytes, static_cast<int>(members), rank));
  board->touchPages();
  return board;
}

void NodeBoard::touchPages() {
  // This rank's payloads are its own until it publishes them; the rest it only reads.
  for (Lane lane : {Lane::kWide, Lane::kNarrow}) {
    const size_t payloadBytes = lane == Lane::kNarrow
                                    ? kNarrowPayloadBytes
                                    : lanes_[static_cast<size_t>(lane)].entryBytes - sizeof(EntryHeader);
    for (uint32_t sequence = 0; sequence < kEntriesPerRank; ++sequence) {
      touchForWrite(payloadOf(entry(lane, rank_, sequence)), payloadBytes);
    }
  }
  touchForRead(segment_.data(), segment_.size());
}

}  // namespace comm::core
