// The collectives over the node board (core/node_board.h): every rank
// publishes its whole input in its board entry, waits until every rank has
// published, and builds its output from the entries it needs. One
// publication and one look at each peer's entry replace the rounds of
// messages of the other algorithms, which is what small collectives on one
// node are made of. The selection table picks them for inputs that fit an
// entry (NodeBoard::kPayloadBytes) on communicators that have a board.
// Reductions combine the entries in rank order, so every rank computes the
// same bits. A rank that only gives (a broadcast or scatter root, a
// non-root of gather or reduce) publishes and returns without waiting.
#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void boardBarrier(CollectiveContext& ctx);
void boardAllReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);
void boardReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
                 int root);
void boardBroadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root);
void boardAllGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets);
void boardReduceScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                        comm_dtype_t dtype, comm_op_t op);
void boardGather(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                 int root);
void boardScatter(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets,
                  int root);
// Ranks choose this one from their own sizes alone, so it may find that a
// peer's blocks did not fit its entry; then it returns false having received
// nothing, and the caller runs another algorithm (every rank sees the same).
bool boardAllToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
                   const size_t* recvBytes);

// What boardAllToAll needs on the board: a table of block offsets, then the blocks.
size_t boardAllToAllBytes(int size, const size_t* sendBytes);

}  // namespace comm::algo
