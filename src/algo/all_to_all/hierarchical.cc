// All-to-all aggregated per node pair, for a communicator on H nodes of L
// ranks each. Rank (n, j) is the rank at place j of node n.
//   0. Within each node, the ranks tell each other the sizes of their
//      blocks: rank (n, i) tells (n, j) those it has for (m, j), every m.
//   1. Within each node, rank (n, i) hands (n, j) its blocks for (m, j),
//      every m, over shared memory. Those for node n itself land in their
//      place at once; (n, j) stacks the others node by node, the L blocks
//      for each node m after a header of their sizes.
//   2. Across nodes, the ranks at place j exchange the stacks: (n, j) sends
//      (m, j) one message with the L blocks of node n's ranks for it.
// A pair of nodes then exchanges L messages each way instead of L x L: it
// pays where each message's latency, not the bytes, sets the time. Every
// byte still crosses between nodes once, as in the flat exchange, but it is
// copied twice more within the node (into the stack, out of the landing).
// Cost: (L-1) 2 alpha_shm + (H-1) alpha_net + (H-1)/H N beta_net
// + 2 N beta_shm per rank, for N bytes sent by each; the flat pairwise
// exchange: (n-1) alpha_net + (n-1)/n N beta.
#include "algo/all_to_all/hierarchical.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "algo/all_to_all/pairwise.h"
#include "algo/all_to_all/sized_block.h"
#include "algo/block_messages.h"
#include "algo/patterns/phase_steps.h"
#include "algo/patterns/place_major.h"
#include "common/error.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

// Partners whose blocks may be outstanding at once in phase 1 (each with a
// block for every node).
constexpr size_t kPartnersInFlight = 4;

// Where the blocks for each other node are stacked, and where those from
// each other node land: per node, a header of L sizes, then the L blocks.
struct Stacks {
  std::vector<size_t> at;  // per node, then the end
  Stacks(int nodes, int places, int ownNode, const std::vector<uint64_t>& blockBytes)
      : at(static_cast<size_t>(nodes) + 1) {
    size_t end = 0;
    for (int m = 0; m < nodes; ++m) {
      at[m] = end;
      if (m == ownNode) continue;
      end += places * sizeof(uint64_t);
      for (int i = 0; i < places; ++i) end += blockBytes[static_cast<size_t>(m) * places + i];
    }
    at[nodes] = end;
  }
  size_t bytesOf(int node) const { return at[node + 1] - at[node]; }
};

// "524293 bytes from rank 0, 786437 from rank 1, ...": what `rank`
// expects from the ranks of the other nodes, for an error message.
std::string describeExpected(const core::NodeLayout& nodes, int ownNode, int rank, const size_t* recvBytes) {
  constexpr int kNamed = 16;
  std::string said;
  int named = 0;
  for (int sender = 0; sender < static_cast<int>(nodes.nodeOf.size()); ++sender) {
    if (nodes.nodeOf[sender] == ownNode || sender == rank) continue;
    if (named++ == kNamed) return said + ", ...";
    said += fmt::format("{}{} {}from rank {}", named == 1 ? "" : ", ", recvBytes[sender], named == 1 ? "bytes " : "",
                        sender);
  }
  return said;
}

}  // namespace

void hierarchicalAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                          const size_t* recvBytes) {
  const core::NodeLayout& nodes = ctx.communicator().nodes();
  const int rank = ctx.rank();
  const int nodeCount = nodes.count();
  const int places = nodes.ranksPerNode;
  const int ownNode = nodes.nodeOf[rank];
  const int place = nodes.indexOnNode[rank];
  const std::vector<int>& onNode = nodes.members[ownNode];
  const bool chunked = ctx.chunkedMessages();
  auto rankAt = [&](int node, int at) { return nodes.members[node][at]; };
  // blockBytes[m * L + i]: what (own node, i) sends (m, place).
  std::vector<uint64_t> blockBytes(static_cast<size_t>(nodeCount) * places);
  {
    std::vector<uint64_t> told(blockBytes.size());  // [j * H + m]: what this rank sends (m, j)
    for (int j = 0; j < places; ++j) {
      for (int m = 0; m < nodeCount; ++m) told[static_cast<size_t>(j) * nodeCount + m] = sendBytes[rankAt(m, j)];
    }
    std::vector<uint64_t> heard(blockBytes.size());  // [i * H + m]: what (own node, i) sends (m, place)
    std::vector<const void*> sendSizes(places);
    std::vector<void*> recvSizes(places);
    const std::vector<size_t> sizesBytes(places, nodeCount * sizeof(uint64_t));
    for (int i = 0; i < places; ++i) {
      sendSizes[i] = &told[static_cast<size_t>(i) * nodeCount];
      recvSizes[i] = &heard[static_cast<size_t>(i) * nodeCount];
    }
    CollectiveContext::Subgroup sizes(ctx, onNode, 0);
    pairwiseAllToAll(ctx, sendSizes.data(), sizesBytes.data(), recvSizes.data(), sizesBytes.data());
    for (int i = 0; i < places; ++i) {
      for (int m = 0; m < nodeCount; ++m) {
        blockBytes[static_cast<size_t>(m) * places + i] = heard[static_cast<size_t>(i) * nodeCount + m];
      }
    }
  }
  // Phase 1 fills the outgoing stacks.
  const Stacks outgoing(nodeCount, places, ownNode, blockBytes);
  char* stacked = ctx.scratch(core::Scratch::kPhase, outgoing.at[nodeCount]);
  std::vector<size_t> blockAt(blockBytes.size());
  for (int m = 0; m < nodeCount; ++m) {
    if (m == ownNode) continue;
    auto* header = reinterpret_cast<uint64_t*>(stacked + outgoing.at[m]);
    size_t at = outgoing.at[m] + places * sizeof(uint64_t);
    for (int i = 0; i < places; ++i) {
      const size_t b = static_cast<size_t>(m) * places + i;
      header[i] = blockBytes[b];
      blockAt[b] = at;
      at += blockBytes[b];
    }
  }
  {
    CollectiveContext::Subgroup phase(ctx, onNode, kPhaseSteps);
    // Partner k's blocks for node m under step m L + k; their chunked sizes after all of those.
    const uint32_t sizeSteps = static_cast<uint32_t>(nodeCount * places);
    std::deque<std::vector<SizedBlocks>> inFlight;
    for (int k = 1; k < places; ++k) {
      if (inFlight.size() == kPartnersInFlight) {
        for (SizedBlocks& blocks : inFlight.front()) blocks.wait(ctx);
        inFlight.pop_front();
      }
      const int to = (place + k) % places;
      const int from = (place - k + places) % places;
      std::vector<SizedBlocks>& blocks = inFlight.emplace_back(nodeCount);
      for (int m = 0; m < nodeCount; ++m) {
        const auto step = static_cast<uint32_t>(m * places + k);
        const size_t b = static_cast<size_t>(m) * places + from;
        if (m == ownNode) {
          const int sender = rankAt(m, from);
          blocks[m].receive(ctx, from, step, sizeSteps + step, static_cast<char*>(recv[sender]), recvBytes[sender],
                            chunked);
        } else {
          blocks[m].receive(ctx, from, step, sizeSteps + step, stacked + blockAt[b], blockBytes[b], chunked);
        }
        const int receiver = rankAt(m, to);
        blocks[m].send(ctx, to, step, sizeSteps + step, static_cast<const char*>(send[receiver]), sendBytes[receiver],
                       chunked);
      }
    }
    if (sendBytes[rank] != recvBytes[rank]) {
      fail(COMM_ERR_INVALID_ARGUMENT, "rank {} sends {} bytes to itself but expects to receive {}", rank,
           sendBytes[rank], recvBytes[rank]);
    }
    copyBlock(ctx, recv[rank], send[rank], sendBytes[rank]);
    for (int m = 0; m < nodeCount; ++m) {
      if (m != ownNode)
        copyBlock(ctx, stacked + blockAt[static_cast<size_t>(m) * places + place], send[rankAt(m, place)],
                  sendBytes[rankAt(m, place)]);
    }
    for (std::vector<SizedBlocks>& partner : inFlight) {
      for (SizedBlocks& blocks : partner) blocks.wait(ctx);
    }
  }
  // Phase 2: what this rank expects from each node's ranks, stacked alike.
  std::vector<uint64_t> expected(blockBytes.size());
  for (int m = 0; m < nodeCount; ++m) {
    for (int i = 0; i < places; ++i) expected[static_cast<size_t>(m) * places + i] = recvBytes[rankAt(m, i)];
  }
  const Stacks incoming(nodeCount, places, ownNode, expected);
  char* landed = ctx.scratch(core::Scratch::kResult, incoming.at[nodeCount]);
  {
    std::vector<const void*> sendStacks(nodeCount);
    std::vector<void*> recvStacks(nodeCount);
    std::vector<size_t> sendStackBytes(nodeCount), recvStackBytes(nodeCount);
    for (int m = 0; m < nodeCount; ++m) {
      sendStacks[m] = stacked + outgoing.at[m];
      sendStackBytes[m] = outgoing.bytesOf(m);
      recvStacks[m] = landed + incoming.at[m];
      recvStackBytes[m] = incoming.bytesOf(m);
    }
    const std::vector<int> samePlace = ranksAtPlace(nodes, place);  // the subgroup keeps a view of it
    CollectiveContext::Subgroup acrossNodes(ctx, samePlace, 2 * kPhaseSteps);
    try {
      pairwiseAllToAll(ctx, sendStacks.data(), sendStackBytes.data(), recvStacks.data(), recvStackBytes.data());
    } catch (const Error& error) {
      if (error.status() != COMM_ERR_MISMATCH) throw;
      // The transport saw a stack of the wrong size, which only the
      // forwarding rank names: say which blocks it carries.
      fail(COMM_ERR_MISMATCH, "{} (a stack of the blocks of another node's ranks for rank {}, which expects {})",
           error.what(), rank, describeExpected(nodes, ownNode, rank, recvBytes));
    }
  }
  for (int m = 0; m < nodeCount; ++m) {
    if (m == ownNode) continue;
    const auto* header = reinterpret_cast<const uint64_t*>(landed + incoming.at[m]);
    size_t at = incoming.at[m] + places * sizeof(uint64_t);
    for (int i = 0; i < places; ++i) {
      const int sender = rankAt(m, i);
      if (header[i] != recvBytes[sender]) {
        ctx.failDisagreement(fmt::format("rank {} sends {} bytes to rank {} vs rank {} expecting {} from it", sender,
                                         header[i], rank, rank, recvBytes[sender]));
      }
      copyBlock(ctx, recv[sender], landed + at, recvBytes[sender]);
      at += recvBytes[sender];
    }
  }
}

}  // namespace comm::algo
