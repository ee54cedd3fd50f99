// The collectives as the engine runs them: raw host buffers, sizes in
// elements or bytes, already validated by api/. Each function picks an
// algorithm from the selection table (algo/selection/selection.h) and runs it
// on the context. Every rank calls the same function with agreeing arguments.
// AVG: every algorithm combines like SUM and these functions divide the
// result once, on the rank(s) that hold it.
#pragma once

#include <cstddef>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void barrier(CollectiveContext& ctx);

// `in` may equal `out`.
void allReduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op);

// `out` is written on `root` only (may be nullptr elsewhere); `in` may equal `out`.
void reduce(CollectiveContext& ctx, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op,
            int root);

// `buffer` holds the data on `root` and receives it elsewhere.
void broadcast(CollectiveContext& ctx, void* buffer, size_t bytes, int root);

// Block r of `out` (bytes[r] at offsets[r]) receives rank r's `in`. `in`
// may be exactly this rank's block of `out`. Even collectives pass equal sizes.
void allGatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets);

// Rank r gets op over every rank of elements [offsets[r], +counts[r]) of `in`.
// `out` may be exactly this rank's block of `in`.
void reduceScatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* counts, const size_t* offsets,
                    comm_dtype_t dtype, comm_op_t op);

// On `root`, block r of `out` receives rank r's `in` (`out` nullptr elsewhere).
void gatherV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root);

// Rank r receives block r of `root`'s `in` (`in` nullptr elsewhere).
void scatterV(CollectiveContext& ctx, const void* in, void* out, const size_t* bytes, const size_t* offsets, int root);

// Rank r sends sendBytes[p] from send[p] to every rank p and receives
// recvBytes[p] into recv[p] (the entry for itself is a local copy).
void allToAll(CollectiveContext& ctx, const void* const* send, const size_t* sendBytes, void* const* recv,
              const size_t* recvBytes);

}  // namespace comm::algo
