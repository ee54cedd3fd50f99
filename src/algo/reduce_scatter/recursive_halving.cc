// Recursive halving reduce-scatter (Thakur, Rabenseifner and Gropp). The p
// participants exchange with the partner at distance p/2, p/4, ..., 1: each
// keeps the half of its current range of blocks on its own side, sends the
// other half and reduces the partner's half into what it keeps, so after
// log2 p steps each holds its own block complete. Every element is reduced
// once per step in a fixed order (the lower participant's data first).
// Non-powers of two fold first (algo/patterns/fold.h); the even rank
// of a pair gets its block back from the odd one.
// Cost for N bytes in equal blocks, p = n: log2 p alpha + (p-1)/p N beta +
// (p-1)/p N gamma; folding adds 2 alpha + N beta + N gamma.
#include "algo/reduce_scatter/recursive_halving.h"

#include <bit>
#include <cstring>
#include <memory>

#include "algo/blocks/pipeline.h"
#include "common/dtype.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

enum Step : uint32_t { kFold = 0, kUnfold = 1, kHalving = 2 };

// The half of [first, first + 2 * half) that participant `newRank` keeps.
int keptFirst(int newRank, int first, int half) { return (newRank & half) == 0 ? first : first + half; }

}  // namespace

void recursiveHalving(CollectiveContext& ctx, const Fold& fold, const void* src, void* mine, const Blocks& blocks,
                      comm_dtype_t dtype, comm_op_t op, uint32_t stepBase) {
  const int p = fold.participants();
  const int me = fold.newRank();
  const size_t elementSize = dtypeSize(dtype);

  // Step k lands the partner's half in buffer k % 2 and reduces into it;
  // step k+2 reuses it after step k+1 sent from it. Later halves are smaller.
  size_t landingBytes[2] = {0, 0};
  for (int half = p / 2, kept = 0, k = 0; half >= 1 && k < 2; half /= 2, ++k) {
    kept = keptFirst(me, kept, half);
    landingBytes[k] = blocks.span(kept, kept + half) * elementSize;
  }
  char* scratch = ctx.scratch(core::Scratch::kLanding, landingBytes[0] + landingBytes[1]);
  char* landings[2] = {scratch, scratch + landingBytes[0]};

  const char* current = static_cast<const char*>(src);  // holds blocks [first, first + 2 * half)
  size_t currentOffset = 0;                             // element offset of `current` in the vector
  int first = 0;
  for (int half = p / 2, k = 0; half >= 1; half /= 2, ++k) {
    int partnerNewRank = me ^ half;
    int partner = fold.rankOf(partnerNewRank);
    bool lower = me < partnerNewRank;
    int kept = keptFirst(me, first, half);
    int given = keptFirst(partnerNewRank, first, half);
    size_t keptBytes = blocks.span(kept, kept + half) * elementSize;
    const char* own = current + (blocks.offsets()[kept] - currentOffset) * elementSize;
    const char* give = current + (blocks.offsets()[given] - currentOffset) * elementSize;
    char* landing = landings[k % 2];
    char* result = half == 1 ? static_cast<char*>(mine) : landing;

    RequestRange sent = sendChunks(ctx, partner, stepBase + k, give, blocks.span(given, given + half) * elementSize);
    receiveChunks(ctx, partner, stepBase + k, landing, keptBytes, [&](size_t offset, size_t bytes) {
      const char* ours = own + offset;
      const char* theirs = landing + offset;
      reduce::combine(result + offset, lower ? ours : theirs, lower ? theirs : ours, bytes / elementSize, dtype, op);
    });
    waitEach(ctx, sent);
    current = result;
    currentOffset = blocks.offsets()[kept];
    first = kept;
  }
}

void recursiveHalvingReduceScatter(CollectiveContext& ctx, const void* in, void* out, const Blocks& blocks,
                                   comm_dtype_t dtype, comm_op_t op) {
  const int rank = ctx.rank();
  const size_t elementSize = dtypeSize(dtype);
  const size_t totalBytes = blocks.total() * elementSize;
  Fold fold(ctx.size(), rank);
  if (fold.handsOver()) {
    handOver(ctx, fold, in, totalBytes, out, blocks.counts()[rank] * elementSize, kFold, kUnfold);
    return;
  }
  Blocks joined = fold.participantBlocks(blocks);
  if (!fold.carriesPartner()) {
    recursiveHalving(ctx, fold, in, out, joined, dtype, op, kHalving);
    return;
  }
  // The pair's two blocks come out side by side: pass the partner its own.
  char* acc = ctx.scratch(core::Scratch::kResult, totalBytes);
  combineFolded(ctx, fold, in, acc, blocks.total(), dtype, op, kFold);
  recursiveHalving(ctx, fold, acc, acc + joined.offsets()[fold.newRank()] * elementSize, joined, dtype, op, kHalving);
  int partner = fold.partner();
  RequestId sent =
      ctx.send(partner, kUnfold, acc + blocks.offsets()[partner] * elementSize, blocks.counts()[partner] * elementSize);
  if (blocks.counts()[rank] > 0) {
    std::memcpy(out, acc + blocks.offsets()[rank] * elementSize, blocks.counts()[rank] * elementSize);
  }
  ctx.wait(sent);
}

}  // namespace comm::algo
