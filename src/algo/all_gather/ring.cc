// Ring all-gather: in step s every rank passes the block it received in step
// s-1 (its own in step 0) to its right neighbour and receives the next one
// from its left, straight into place. Each rank only ever talks to its two
// neighbours, and every block crosses each link once.
// Cost: (n-1) alpha + (n-1)/n N beta for an output of N bytes -- optimal in
// bandwidth, linear in latency, so it is the large-message algorithm. Uneven
// blocks are fine; the step time follows the largest block in flight.
#include "algo/all_gather/ring.h"

#include <vector>

#include "algo/blocks.h"

namespace comm::algo {

void ringAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  int n = ctx.size();
  int rank = ctx.rank();
  char* data = static_cast<char*>(out);
  if (n == 1) return copyBlock(ctx, data + offsets[rank], in, bytes[rank]);
  int right = (rank + 1) % n;
  int left = (rank + n - 1) % n;
  // The block a rank sends in step s; it receives its left neighbour's, the block of step s+1.
  auto blockOf = [&](int step) { return (rank - step + n) % n; };
  // The receive of step s+1 is posted before step s is awaited, so the
  // message finds its buffer rather than the unexpected queue.
  std::vector<core::RequestId> received(n);
  auto post = [&](int step) {
    int block = blockOf(step + 1);
    if (bytes[block] > 0) received[step] = ctx.recv(left, step, data + offsets[block], bytes[block]);
  };
  post(0);
  for (int step = 0; step < n - 1; ++step) {
    if (step + 1 < n - 1) post(step + 1);
    int block = blockOf(step);
    // A rank's own block leaves from the input, so the copy into the output
    // overlaps the first step's transfer instead of delaying it.
    const void* from = step == 0 ? in : data + offsets[block];
    if (bytes[block] > 0) ctx.send(right, step, from, bytes[block]);
    if (step == 0) copyBlock(ctx, data + offsets[rank], in, bytes[rank]);
    if (bytes[blockOf(step + 1)] > 0) ctx.wait(received[step]);
  }
}

}  // namespace comm::algo
