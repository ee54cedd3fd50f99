// The collectives comm-bench measures, described in nccl-tests' terms: how
// a size in bytes becomes a per-rank count, where each rank's input and
// output lie in the two buffers (out of place and in place), which input
// element each output element must equal, and the comm call itself.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "comm.h"

namespace commbench {

enum class Placement { kOutOfPlace, kInPlace };

// The two buffers every run uses, each as large as the largest size.
enum class Buffer { kSend, kRecv };

// A tensor's place: `elements` elements from element `offset` of `buffer`.
struct View {
  Buffer buffer;
  size_t offset;
  size_t elements;
};

// A rank's input and output; absent where the call takes NULL there (the
// output of reduce and gather off the root, the input of broadcast and
// scatter off the root).
struct Views {
  std::optional<View> in;
  std::optional<View> out;
};

// One rank's view of a call: nccl-tests' count (elements per rank, or per
// block for the collectives whose buffers hold one block per rank).
struct Geometry {
  size_t count;
  int ranks;
  int rank;
  int root;
};

// Where output element i comes from: element `index` of rank `rank`'s input,
// or, for rank == kEveryRank, the reduction of element `index` over ranks.
inline constexpr int kEveryRank = -1;
struct Source {
  int rank;
  size_t index;
};

// What a call is started with; `batch` only for send_recv.
struct Operands {
  comm_tensor_t* in;
  comm_tensor_t* out;
  comm_op_t op;
  int root;
  comm_batch_t* batch;
};

struct Collective {
  std::string_view name;
  bool reduces = false;  // takes an op: the redop column
  bool rooted = false;   // takes a root: the root column
  bool sized = true;     // false for barrier: one row, no data
  // nccl-tests' bytes hold one count-sized block per rank (all_gather,
  // reduce_scatter, gather, scatter, all_to_all) rather than one block.
  bool blockPerRank = false;
  bool hasInPlace = true;  // whether comm.h defines an in-place form
  double (*busFactor)(int ranks) = nullptr;
  std::string_view busFactorFormula;  // "2(n-1)/n"...
  Views (*views)(const Geometry& geometry, Placement placement) = nullptr;
  Source (*source)(const Geometry& geometry, size_t outIndex) = nullptr;
  comm_status_t (*start)(comm_t* comm, const Operands& operands, comm_handle_t** handle) = nullptr;
  // send_recv's exchange is a batch built once per size; nullptr elsewhere.
  comm_status_t (*makeBatch)(comm_batch_t** batch, const Geometry& geometry, comm_tensor_t* in,
                             comm_tensor_t* received) = nullptr;
};

std::span<const Collective> collectives();

// By name ("all_reduce") or nccl-tests-style alias ("allreduce", "bcast",
// "alltoall", "sendrecv"); nullptr when unknown.
const Collective* findCollective(std::string_view name);

// Per-rank count for `bytes` of nccl-tests size, and back (the size a row
// reports: `bytes` rounded down to whole elements and blocks).
size_t countOf(const Collective& collective, size_t bytes, size_t elementSize, int ranks);
size_t bytesOf(const Collective& collective, size_t count, size_t elementSize, int ranks);

}  // namespace commbench
