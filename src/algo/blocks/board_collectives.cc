#include "algo/blocks/board_collectives.h"

#include <cstdint>
#include <cstring>
#include <numeric>

#include "common/dtype.h"
#include "common/error.h"
#include "reduce/reduce.h"

namespace comm::algo {
namespace {

// Copies 1 to 2 x sizeof(Word) bytes as two words that may overlap.
template <typename Word>
void copyTwoWords(char* to, const char* from, size_t bytes) {
  Word head, tail;
  std::memcpy(&head, from, sizeof(Word));
  std::memcpy(&tail, from + bytes - sizeof(Word), sizeof(Word));
  std::memcpy(to, &head, sizeof(Word));
  std::memcpy(to + bytes - sizeof(Word), &tail, sizeof(Word));
}

// memcpy, inline for the few bytes of a latency-bound collective: a call
// into libc costs as much as the rest of such a copy.
void copy(void* to, const void* from, size_t bytes) {
  auto* d = static_cast<char*>(to);
  auto* s = static_cast<const char*>(from);
  if (bytes > 16) {
    std::memcpy(d, s, bytes);
  } else if (bytes >= 8) {
    copyTwoWords<uint64_t>(d, s, bytes);
  } else if (bytes >= 4) {
    copyTwoWords<uint32_t>(d, s, bytes);
  } else {
    for (size_t i = 0; i < bytes; ++i) d[i] = s[i];
  }
}

void copyIn(CollectiveContext& ctx, const void* data, size_t bytes) { copy(ctx.boardPayload(), data, bytes); }

// Copies `bytes` of `data` into this rank's entry and exchanges entries.
void publish(CollectiveContext& ctx, const void* data, size_t bytes) {
  copyIn(ctx, data, bytes);
  ctx.exchangeOnBoard(static_cast<uint32_t>(bytes));
}

// Copies `bytes` of `data` into this rank's entry and leaves: a rank that
// only gives waits for nobody.
void give(CollectiveContext& ctx, const void* data, size_t bytes) {
  copyIn(ctx, data, bytes);
  ctx.publishOnBoard(static_cast<uint32_t>(bytes));
}

// out = op over every rank's entry, in rank order, of elements [first, first + count).
void combineEntries(CollectiveContext& ctx, void* out, size_t first, size_t count, comm_dtype_t dtype, comm_op_t op) {
  const size_t offset = first * dtypeSize(dtype);
  reduce::combine(out, ctx.boardPayloadOf(0) + offset, ctx.boardPayloadOf(1) + offset, count, dtype, op);
  for (int r = 2; r < ctx.size(); ++r) reduce::combine(out, out, ctx.boardPayloadOf(r) + offset, count, dtype, op);
}

// The all_to_all entry starts with size + 1 offsets: rank p's block for rank
// r lies between offsets r and r + 1 of p's table, counted from the entry's start.
using BlockOffset = uint32_t;

}  // namespace

void boardBarrier(CollectiveContext& ctx) { ctx.exchangeOnBoard(0); }

void boardAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  publish(ctx, in, count * dtypeSize(dtype));
  combineEntries(ctx, out, 0, count, dtype, op);
}

void boardReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                 int root) {
  if (ctx.rank() != root) return give(ctx, in, count * dtypeSize(dtype));
  publish(ctx, in, count * dtypeSize(dtype));
  combineEntries(ctx, out, 0, count, dtype, op);
}

void boardBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root) {
  if (ctx.rank() == root) return give(ctx, buffer, bytes);
  ctx.exchangeOnBoard(0);
  copy(buffer, ctx.boardPayloadOf(root), bytes);
}

void boardAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets) {
  publish(ctx, in, bytes[ctx.rank()]);
  for (int r = 0; r < ctx.size(); ++r) {
    copy(static_cast<char*>(out) + offsets[r], ctx.boardPayloadOf(r), bytes[r]);
  }
}

void boardReduceScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                        comm_dtype_t dtype, comm_op_t op) {
  const size_t total = std::accumulate(counts, counts + ctx.size(), size_t{0});
  publish(ctx, in, total * dtypeSize(dtype));
  if (counts[ctx.rank()] > 0) combineEntries(ctx, out, offsets[ctx.rank()], counts[ctx.rank()], dtype, op);
}

void boardGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                 int root) {
  if (ctx.rank() != root) return give(ctx, in, bytes[ctx.rank()]);
  publish(ctx, in, bytes[ctx.rank()]);
  for (int r = 0; r < ctx.size(); ++r) {
    copy(static_cast<char*>(out) + offsets[r], ctx.boardPayloadOf(r), bytes[r]);
  }
}

void boardScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                  int root) {
  const int n = ctx.size();
  const int self = ctx.rank();
  if (self == root) {
    give(ctx, in, offsets[n - 1] + bytes[n - 1]);
    const char* mine = static_cast<const char*>(in) + offsets[self];
    if (mine != out) copy(out, mine, bytes[self]);  // in place: already there
    return;
  }
  ctx.exchangeOnBoard(0);
  copy(out, ctx.boardPayloadOf(root) + offsets[self], bytes[self]);
}

size_t boardAllToAllBytes(int size, const size_t* sendBytes) {
  return (static_cast<size_t>(size) + 1) * sizeof(BlockOffset) +
         std::accumulate(sendBytes, sendBytes + size, size_t{0});
}

bool boardAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                   const size_t* recvBytes) {
  const int n = ctx.size();
  char* entry = ctx.boardPayload();
  auto* table = reinterpret_cast<BlockOffset*>(entry);
  size_t at = (static_cast<size_t>(n) + 1) * sizeof(BlockOffset);
  for (int p = 0; p < n; ++p) {
    table[p] = static_cast<BlockOffset>(at);
    copy(entry + at, send[p], sendBytes[p]);
    at += sendBytes[p];
  }
  table[n] = static_cast<BlockOffset>(at);
  ctx.exchangeOnBoard(static_cast<uint32_t>(at));
  for (int p = 0; p < n; ++p) {
    if (ctx.boardPayloadBytesOf(p) == core::NodeBoard::kNoPayload) return false;
  }
  const int self = ctx.rank();
  for (int p = 0; p < n; ++p) {
    BlockOffset theirs[2];
    std::memcpy(theirs, ctx.boardPayloadOf(p) + self * sizeof(BlockOffset), sizeof theirs);
    const size_t bytes = theirs[1] - theirs[0];
    if (bytes != recvBytes[p]) {
      fail(COMM_ERR_MISMATCH, "{}: rank {} sends {} bytes to rank {}, which expects {}", ctx.what(), p, bytes, self,
           recvBytes[p]);
    }
    copy(recv[p], ctx.boardPayloadOf(p) + theirs[0], bytes);
  }
  return true;
}

}  // namespace comm::algo
