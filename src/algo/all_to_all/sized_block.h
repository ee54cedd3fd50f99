// One step of all_to_all's exchange: a block to one peer and a block from
// another, whose sizes only the two ends of each know. The signature cannot
// cover them (every rank has its own splits), so a block that goes as one
// message relies on the transport, which reports a message of the wrong
// size as a mismatch.
//
// Over comm's TCP transport a block of more than kChunkBytes goes in chunks
// (algo/blocks/pipeline.h says why), and chunks alone would lose that check:
// two sizes that cut into the same first chunks match chunk for chunk, and
// the longer side waits for the rest until its deadline. So a chunked block
// goes as
//   - an 8-byte message with its size, under a step of its own, which the
//     receiver compares with the size it expects, and
//   - its chunks: the first of more than kChunkBytes (up to twice that),
//     the rest kChunkBytes each.
// A first chunk is longer than any block that goes whole, so where only one
// end chunks, the transport still sees a message of the wrong size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;
using core::RequestId;

class SizedBlocks {
 public:
  // Posts the receive of `bytes` from `from` under `step` (chunked: its size
  // under `sizeStep`); nothing for an empty block.
  void receive(CollectiveContext& ctx, int from, uint32_t step, uint32_t sizeStep, char* data, size_t bytes,
               bool chunked);
  // Posts the matching send of `bytes` to `to`.
  void send(CollectiveContext& ctx, int to, uint32_t step, uint32_t sizeStep, const char* data, size_t bytes,
            bool chunked);
  // Waits for all of it; fails, telling the other ranks, when the sender of
  // a chunked block said a size other than the one expected.
  void wait(CollectiveContext& ctx);

 private:
  std::vector<RequestId> posted_;  // waited for in posting order
  // A chunked block received: the position in posted_ of the receive of its
  // size, what that receive brings, and what this rank expects.
  size_t sizeReceive_ = SIZE_MAX;
  uint64_t announced_ = 0;
  uint64_t expected_ = 0;
  int from_ = -1;
  uint64_t sending_ = 0;  // the size message of a chunked block sent
};

}  // namespace comm::algo
