// All-to-all aggregated per node pair, for a communicator on H nodes of L
// ranks each. Rank (n, j) is the rank with local rank j of node n; a stack is the
// L blocks that the ranks of node n send to rank (m, j), m != n, after a
// header of their sizes.
//   0. Within each node the ranks tell each other their block sizes, so
//      that every rank of node n knows every stack node n sends, and
//      whether each goes stacked: while it holds at most (L-1)
//      kStackBytesPerSaving.
//      Rank (m, j) knows the same of the stacks it receives from its
//      block sizes, so every pair of ranks decides alike.
//   1. Within each node, rank (n, i) hands (n, j) its blocks for the
//      stacked stacks to (m, j), every m, over shared memory; blocks for
//      node n itself land in their place at once.
//   2. Across nodes, the ranks with local rank j exchange the stacked stacks: one
//      message for each pair of nodes and local rank instead of L.
//   3. The blocks of stacks too large to stack go straight to their rank,
//      as in the flat pairwise exchange.
// A stack saves L-1 message latencies across nodes for two copies of its
// bytes within the node (into the stack, out of the landing area), so only
// small ones go stacked. Every byte crosses between nodes once either way.
// Cost, all stacked: (L-1) 2 alpha_shm + (H-1) alpha_net + (H-1)/H N
// beta_net + 2 N beta_shm per rank, for N bytes sent by each; all
// straight: the flat pairwise exchange, (n-1) alpha_net + (n-1)/n N beta,
// after the size exchange within the node.
#include "algo/all_to_all/hierarchical.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "algo/all_to_all/pairwise.h"
#include "algo/all_to_all/sized_block.h"
#include "algo/blocks/block_messages.h"
#include "algo/patterns/local_rank_major.h"
#include "algo/patterns/phase_steps.h"
#include "common/error.h"
#include "core/communicator.h"

namespace comm::algo {
namespace {

// A stack (header included) goes as one message while it holds at most
// kStackBytesPerSaving for each of the L-1 messages it saves: about where
// its two extra copies within the node, at several GB/s, cost as much as
// the message latencies (tens of microseconds) it saves across nodes.
constexpr size_t kStackBytesPerSaving = size_t{32} << 10;

size_t maxStackBytes(const core::NodeLayout& nodes) { return (nodes.ranksPerNode - 1) * kStackBytesPerSaving; }

// Partners whose blocks may be outstanding at once in phase 1 (each with a
// block for every node).
constexpr size_t kPartnersInFlight = 4;

// Where a rank keeps stacks, one per other node: those it sends (to its
// local rank on each node) or those it receives. A node's stack is empty when
// its blocks go straight.
struct Stacks {
  std::vector<size_t> at;  // per node, then the end
  // `blockBytes(m, i)`: the block of local rank i in node m's stack.
  template <typename BlockBytes>
  Stacks(const core::NodeLayout& nodes, int ownNode, BlockBytes blockBytes) : at(nodes.members.size() + 1) {
    const size_t header = nodes.ranksPerNode * sizeof(uint64_t);
    size_t end = 0;
    for (int m = 0; m < nodes.count(); ++m) {
      at[m] = end;
      if (m == ownNode) continue;
      size_t bytes = header;
      for (int i = 0; i < nodes.ranksPerNode; ++i) bytes += blockBytes(m, i);
      if (bytes <= maxStackBytes(nodes)) end += bytes;
    }
    at[nodes.count()] = end;
  }
  size_t bytesOf(int node) const { return at[node + 1] - at[node]; }
  bool stacked(int node) const { return bytesOf(node) > 0; }
  // Entry i of node's header: the block sizes of the stack. Stacks lie
  // back to back, so a header may start at any byte: copied, not cast.
  uint64_t headerEntry(const char* base, int node, int i) const {
    uint64_t bytes;
    std::memcpy(&bytes, base + at[node] + static_cast<size_t>(i) * sizeof bytes, sizeof bytes);
    return bytes;
  }
  void setHeaderEntry(char* base, int node, int i, uint64_t bytes) const {
    std::memcpy(base + at[node] + static_cast<size_t>(i) * sizeof bytes, &bytes, sizeof bytes);
  }
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
  const int size = ctx.size();
  const int localRanks = nodes.ranksPerNode;
  const int ownNode = nodes.nodeOf[rank];
  const int localRank = nodes.localRank[rank];
  const std::vector<int>& onNode = nodes.members[ownNode];
  const bool chunked = ctx.chunkedMessages();
  auto rankAt = [&](int node, int at) { return nodes.members[node][at]; };

  // Phase 0. nodeSends[i * size + r]: what (own node, i) sends rank r.
  std::vector<uint64_t> nodeSends(static_cast<size_t>(localRanks) * size);
  {
    const std::vector<uint64_t> mine(sendBytes, sendBytes + size);
    const std::vector<const void*> sendSizes(localRanks, mine.data());
    std::vector<void*> recvSizes(localRanks);
    for (int i = 0; i < localRanks; ++i) recvSizes[i] = &nodeSends[static_cast<size_t>(i) * size];
    const std::vector<size_t> sizesBytes(localRanks, size * sizeof(uint64_t));
    CollectiveContext::Subgroup sizes(ctx, onNode, 0);
    pairwiseAllToAll(ctx, sendSizes.data(), sizesBytes.data(), recvSizes.data(), sizesBytes.data());
  }
  auto nodeSend = [&](int i, int to) { return nodeSends[static_cast<size_t>(i) * size + to]; };
  // stackedTo[r]: whether the own node's stack for rank r (on another node)
  // goes stacked, as r decides too.
  std::vector<bool> stackedTo(size, false);
  for (int r = 0; r < size; ++r) {
    if (nodes.nodeOf[r] == ownNode) continue;
    size_t bytes = localRanks * sizeof(uint64_t);
    for (int i = 0; i < localRanks; ++i) bytes += nodeSend(i, r);
    stackedTo[r] = bytes <= maxStackBytes(nodes);
  }

  // Phase 1 fills this rank's outgoing stacks (to its local rank on each node).
  const Stacks outgoing(nodes, ownNode, [&](int m, int i) { return nodeSend(i, rankAt(m, localRank)); });
  char* stackArea = ctx.scratch(core::Scratch::kPhase, outgoing.at.back());
  auto blockAt = [&](int m, int i) {
    size_t at = outgoing.at[m] + localRanks * sizeof(uint64_t);
    for (int before = 0; before < i; ++before) at += nodeSend(before, rankAt(m, localRank));
    return stackArea + at;
  };
  for (int m = 0; m < nodes.count(); ++m) {
    if (!outgoing.stacked(m)) continue;
    for (int i = 0; i < localRanks; ++i) outgoing.setHeaderEntry(stackArea, m, i, nodeSend(i, rankAt(m, localRank)));
  }
  {
    CollectiveContext::Subgroup phase(ctx, onNode, kPhaseSteps);
    // Partner k's block for node m under step m L + k; chunked sizes after all of those.
    const auto sizeSteps = static_cast<uint32_t>(nodes.count() * localRanks);
    std::deque<std::vector<SizedBlocks>> inFlight;
    for (int k = 1; k < localRanks; ++k) {
      if (inFlight.size() == kPartnersInFlight) {
        for (SizedBlocks& blocks : inFlight.front()) blocks.wait(ctx);
        inFlight.pop_front();
      }
      const int to = (localRank + k) % localRanks;
      const int from = (localRank - k + localRanks) % localRanks;
      std::vector<SizedBlocks>& blocks = inFlight.emplace_back(nodes.count());
      for (int m = 0; m < nodes.count(); ++m) {
        const auto step = static_cast<uint32_t>(m * localRanks + k);
        if (m == ownNode) {
          const int sender = rankAt(m, from);
          blocks[m].receive(ctx, from, step, sizeSteps + step, static_cast<char*>(recv[sender]), recvBytes[sender],
                            chunked);
        } else if (outgoing.stacked(m)) {
          blocks[m].receive(ctx, from, step, sizeSteps + step, blockAt(m, from), nodeSend(from, rankAt(m, localRank)),
                            chunked);
        }
        const int receiver = rankAt(m, to);
        if (m == ownNode || stackedTo[receiver]) {
          blocks[m].send(ctx, to, step, sizeSteps + step, static_cast<const char*>(send[receiver]), sendBytes[receiver],
                         chunked);
        }
      }
    }
    if (sendBytes[rank] != recvBytes[rank]) {
      fail(COMM_ERR_INVALID_ARGUMENT, "rank {} sends {} bytes to itself but expects to receive {}", rank,
           sendBytes[rank], recvBytes[rank]);
    }
    copyBlock(ctx, recv[rank], send[rank], sendBytes[rank]);
    for (int m = 0; m < nodes.count(); ++m) {
      if (outgoing.stacked(m))
        copyBlock(ctx, blockAt(m, localRank), send[rankAt(m, localRank)], sendBytes[rankAt(m, localRank)]);
    }
    for (std::vector<SizedBlocks>& partner : inFlight) {
      for (SizedBlocks& blocks : partner) blocks.wait(ctx);
    }
  }

  // Phase 2: the stacks this rank receives are laid out alike, by what it expects.
  const Stacks incoming(nodes, ownNode, [&](int m, int i) { return recvBytes[rankAt(m, i)]; });
  char* landed = ctx.scratch(core::Scratch::kResult, incoming.at.back());
  {
    std::vector<const void*> sendStacks(nodes.count());
    std::vector<void*> recvStacks(nodes.count());
    std::vector<size_t> sendStackBytes(nodes.count()), recvStackBytes(nodes.count());
    for (int m = 0; m < nodes.count(); ++m) {
      sendStacks[m] = stackArea + outgoing.at[m];
      sendStackBytes[m] = outgoing.bytesOf(m);
      recvStacks[m] = landed + incoming.at[m];
      recvStackBytes[m] = incoming.bytesOf(m);
    }
    const std::vector<int> sameLocalRank = ranksWithLocalRank(nodes, localRank);  // the subgroup keeps a view of it
    CollectiveContext::Subgroup acrossNodes(ctx, sameLocalRank, 2 * kPhaseSteps);
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
  for (int m = 0; m < nodes.count(); ++m) {
    if (!incoming.stacked(m)) continue;
    size_t at = incoming.at[m] + localRanks * sizeof(uint64_t);
    for (int i = 0; i < localRanks; ++i) {
      const int sender = rankAt(m, i);
      const uint64_t announced = incoming.headerEntry(landed, m, i);
      if (announced != recvBytes[sender]) {
        ctx.failDisagreement(fmt::format("rank {} sends {} bytes to rank {} vs rank {} expecting {} from it", sender,
                                         announced, rank, rank, recvBytes[sender]));
      }
      copyBlock(ctx, recv[sender], landed + at, recvBytes[sender]);
      at += recvBytes[sender];
    }
  }

  // Phase 3: the blocks of the stacks too large to stack, each straight to its rank.
  std::vector<size_t> straightSend(size, 0), straightRecv(size, 0);
  bool any = false;
  for (int r = 0; r < size; ++r) {
    const int node = nodes.nodeOf[r];
    if (node == ownNode) continue;
    if (!stackedTo[r]) straightSend[r] = sendBytes[r];
    if (!incoming.stacked(node)) straightRecv[r] = recvBytes[r];
    any = any || straightSend[r] > 0 || straightRecv[r] > 0;
  }
  // A rank with nothing to move skips it: its peers expect nothing of it either.
  if (!any) return;
  std::vector<int> everyone(size);
  std::iota(everyone.begin(), everyone.end(), 0);
  CollectiveContext::Subgroup straight(ctx, everyone, 3 * kPhaseSteps);
  pairwiseAllToAll(ctx, send, straightSend.data(), recv, straightRecv.data());
}

}  // namespace comm::algo
