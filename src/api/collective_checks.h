// The checks of a collective call's arguments: one table, a row per kind,
// that lists in order what is checked (api/collective_checks.cc). Errors
// are COMM_ERR_INVALID_ARGUMENT (or INVALID_USAGE for a destroyed object)
// naming the argument.
#pragma once

#include <optional>

#include "api/collective_call.h"
#include "api/layout.h"
#include "core/call_memory.h"
#include "core/communicator.h"
#include "core/signature.h"

namespace comm::api {

// all_to_all's tensors, one per rank each way: where they are and their sizes.
struct TensorLists {
  explicit TensorLists(int size) : in(size), out(size), inBytes(size), outBytes(size) {}
  PerRank<const void*> in;
  PerRank<void*> out;
  PerRank<size_t> inBytes, outBytes;
};

// What checking a call found, which its launch reads.
struct CheckedCall {
  core::Communicator* communicator = nullptr;
  // The tensors this rank passes; null where it passes none (a rooted
  // call's side that only the root has, a broadcast's root in place).
  const comm_tensor* in = nullptr;
  const comm_tensor* out = nullptr;
  // The tensor that says the call's dtype and count on this rank (in, or
  // out where this rank's block is out, or where there is no in).
  const comm_tensor* described = nullptr;
  core::CallMemory memory;
  // What every rank must agree on (without Signature::memory: the launch
  // sets it).
  core::Signature signature;
  // The per-rank blocks a V collective's counts give (of the tensor that
  // holds every rank's block), or all_to_all_single's of in; outBlocks:
  // all_to_all_single's of out.
  std::optional<Layout> blocks;
  std::optional<Layout> outBlocks;
  std::optional<TensorLists> lists;  // all_to_all's
};

// "comm_all_reduce": the C function that makes a call of `kind`.
const char* callName(core::CollectiveKind kind);

// Checks `call` by its kind's row; throws comm::Error on the first failure.
CheckedCall checkCall(const CollectiveCall& call);

}  // namespace comm::api
