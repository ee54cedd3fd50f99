// The buffers of a node's ranks, read and written where they lie: each
// rank tells the others on its node where its input and output are; a rank
// that needs the node's combination of a piece reads the others' inputs
// with Cross-Memory Attach (CollectiveContext::readMemoryOf) and combines
// them itself, and writes a finished piece straight into their outputs.
// That moves each byte once, where a message through shared memory copies
// it in and out, and no rank waits for another: a piece is combined when
// its reader needs it and handed on when it is done, so a hierarchical
// algorithm does its node's part while its messages across nodes travel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

class NodeBuffers {
 public:
  // Tells every other rank of the current group (the ranks of one node)
  // where `in` and `out` are, under `step`, and learns where theirs are.
  // Every rank also learns whether each may reach every other's memory, so
  // all return the same: nothing where one may not.
  static std::optional<NodeBuffers> exchange(CollectiveContext& ctx, const void* in, void* out, uint32_t step);

  // dest[0, bytes) = op over the group's inputs at byte `offset`: this
  // rank's first, then the others' in group order, an order that does not
  // depend on timing. `dest` may be this rank's input at `offset`.
  // Like share, it works in any group of the context: it names ranks of
  // the communicator.
  void combine(CollectiveContext& ctx, size_t offset, size_t bytes, void* dest, comm_dtype_t dtype, comm_op_t op) const;
  // Copies `bytes` from `from` into every other rank's output at `offset`.
  void share(CollectiveContext& ctx, size_t offset, size_t bytes, const void* from) const;
  // Tells every other rank of the group that this rank is done with their
  // buffers, under `step`, and waits until each has said the same: then
  // every share into this rank's output is in, and nobody reads its input.
  // In the group `exchange` ran in.
  void finish(CollectiveContext& ctx, uint32_t step) const;

 private:
  NodeBuffers() = default;

  const char* ownInput_ = nullptr;
  std::vector<int> others_;  // communicator ranks, in group order
  std::vector<const char*> otherInputs_;
  std::vector<char*> otherOutputs_;  // in their address spaces
};

}  // namespace comm::algo
