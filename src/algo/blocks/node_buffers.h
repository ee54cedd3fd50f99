// The buffers of a node's ranks, read where they lie. Each rank tells the
// others on its node where its input and output are and which part of the
// output it finishes; a rank that needs the node's combination of a piece
// reads the others' inputs with Cross-Memory Attach
// (CollectiveContext::readMemoryOf) and combines them itself, and fetches
// the pieces of the others' parts from their outputs as they finish them.
// That moves each byte once, where a message through shared memory copies
// it in and out, and no rank waits for another: a hierarchical algorithm
// does its node's work while its messages across nodes travel. Nothing is
// written into another rank's memory: a rank that gave up may have handed
// its buffers back to its caller, and a write would land in whatever uses
// them now; a read of them can only spoil a result that fails anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm.h"
#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

class NodeBuffers {
 public:
  // A byte range of the output.
  struct Range {
    size_t offset = 0;
    size_t bytes = 0;
  };
  // The ranges of the output one rank finishes.
  using Part = std::vector<Range>;

  // Tells every other rank of the current group (the ranks of one node)
  // where `in` and `out` are, under `step`, and learns where theirs are.
  // `parts[p]` is the part of the output the rank p of the group finishes; the
  // output has the same layout on every rank. Every rank also learns
  // whether each may read every other's memory, so all return the same:
  // nothing where one may not.
  static std::optional<NodeBuffers> exchange(CollectiveContext& ctx, const void* in, void* out, std::vector<Part> parts,
                                             uint32_t step);

  // The methods below work in any group of the context (they name ranks of
  // the communicator), but for collect: in the group `exchange` ran in.

  // dest[0, bytes) = op over the group's inputs at byte `offset`: this
  // rank's first, then the others' in group order, an order that does not
  // depend on timing. `dest` may be this rank's input at `offset`.
  void combine(CollectiveContext& ctx, size_t offset, size_t bytes, void* dest, comm_dtype_t dtype, comm_op_t op) const;
  // Says that `bytes` at `offset` of this rank's part of the output are
  // final: the other ranks may fetch them.
  void markFinal(size_t offset, size_t bytes);
  // Copies the pieces the other ranks have marked final since the last look.
  void fetchFinished(CollectiveContext& ctx);
  // Once this rank's whole part is final: tells the others so under `step`
  // (where it has one) and, as each with a part says the same, fetches what
  // remains of that part; then,
  // under `step` + 1, tells them it is done with their buffers and waits
  // until each has said the same, so that nobody reads this rank's buffers
  // once it returns.
  void collect(CollectiveContext& ctx, uint32_t step);

 private:
  struct Other {
    int groupRank;  // in the current group
    int rank;       // in the communicator
    const char* input;
    const char* output;
    const uint64_t* log;  // its Log, in its address space
    size_t fetched = 0;   // entries of its log copied
    size_t fetchedBytes = 0;
  };

  NodeBuffers() = default;
  // Copies what `other`'s log lists beyond the entries already fetched.
  void fetchListed(CollectiveContext& ctx, Other& other);

  const char* ownInput_ = nullptr;
  char* ownOutput_ = nullptr;
  std::vector<Part> parts_;
  std::vector<Other> others_;
  // What this rank's part has final, for the others to read: word 0 counts
  // the entries, then an offset and a size per entry. Entries never change
  // once counted; when it is full the others fetch the rest at collect.
  size_t logCapacity_ = 0;  // entries
  std::unique_ptr<uint64_t[]> log_;
};

}  // namespace comm::algo
