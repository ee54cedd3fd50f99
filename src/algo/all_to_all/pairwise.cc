// Pairwise-exchange all-to-all: in step k = 1 .. n-1 every rank sends to one
// peer and receives from one peer, so every rank's link carries one message
// each way per step and no rank is flooded by n-1 senders at once. For a
// power-of-two group the partner is rank XOR k (a true exchange: both sides
// of a pair talk to each other); otherwise a rank sends to rank + k and
// receives from rank - k. The block for itself is a local copy. A few steps
// are kept in flight so small blocks are not held up by one round trip each.
// Over comm's TCP transport a large block travels in chunks (sized_block.h).
// Cost: (n-1) (alpha + m beta) for blocks of m bytes; every byte crosses the
// network once, the minimum.
#include "algo/all_to_all/pairwise.h"

#include <deque>

#include "algo/all_to_all/sized_block.h"
#include "algo/blocks/block_messages.h"
#include "common/error.h"

namespace comm::algo {
namespace {

// Steps whose messages may be outstanding at once.
constexpr size_t kStepsInFlight = 4;

}  // namespace

void pairwiseAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                      const size_t* recvBytes) {
  int n = ctx.size();
  int rank = ctx.rank();
  bool powerOfTwo = (n & (n - 1)) == 0;
  // Steps 1..n-1 carry the blocks, n+1..2n-1 the sizes of chunked ones.
  auto sizeStep = [n](int step) { return static_cast<uint32_t>(n + step); };
  std::deque<SizedBlocks> inFlight;
  for (int step = 1; step < n; ++step) {
    if (inFlight.size() == kStepsInFlight) {
      inFlight.front().wait(ctx);
      inFlight.pop_front();
    }
    int to = powerOfTwo ? rank ^ step : (rank + step) % n;
    int from = powerOfTwo ? rank ^ step : (rank - step + n) % n;
    SizedBlocks& blocks = inFlight.emplace_back();
    // Per pair: a rank's network peers stream chunks even where its
    // shared-memory peers do not.
    blocks.receive(ctx, from, step, sizeStep(step), static_cast<char*>(recv[from]), recvBytes[from],
                   ctx.chunkedMessagesWith(from));
    blocks.send(ctx, to, step, sizeStep(step), static_cast<const char*>(send[to]), sendBytes[to],
                ctx.chunkedMessagesWith(to));
  }
  // Checked after the exchange so that the peers are not left waiting.
  if (sendBytes[rank] != recvBytes[rank]) {
    fail(COMM_ERR_INVALID_ARGUMENT, "rank {} sends {} bytes to itself but expects to receive {}", rank, sendBytes[rank],
         recvBytes[rank]);
  }
  copyBlock(ctx, recv[rank], send[rank], sendBytes[rank]);
  for (SizedBlocks& blocks : inFlight) blocks.wait(ctx);
}

}  // namespace comm::algo
