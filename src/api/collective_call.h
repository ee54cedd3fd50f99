// One collective call as the C API received it, in the manner of NCCL's
// ncclInfo: every comm_* collective fills a CollectiveCall with its
// arguments and hands it to runCollective(), which checks it by its kind's
// row of the check table (api/collective_checks.h) and launches it
// (api/collective_launch.cc). A field a collective does not take keeps its
// default.
#pragma once

#include <cstdint>

#include "comm.h"
#include "core/signature.h"

namespace comm::api {

struct CollectiveCall {
  core::CollectiveKind kind;
  comm_communicator* comm = nullptr;
  comm_handle** handle = nullptr;  // NULL: the call blocks
  const comm_tensor* in = nullptr;
  comm_tensor* out = nullptr;
  comm_op_t op = COMM_OP_SUM;
  int root = -1;
  // The V collectives' rows per rank.
  const int64_t* counts = nullptr;
  // all_to_all_single's rows to and from each rank (NULL: even).
  const int64_t* inSplits = nullptr;
  const int64_t* outSplits = nullptr;
  // all_to_all's lists of one tensor per rank.
  int nins = 0;
  const comm_tensor* const* ins = nullptr;
  int nouts = 0;
  comm_tensor* const* outs = nullptr;
};

// Checks `call`, launches it and returns its status (COMM_OK, or the
// failure also left in comm_last_error()); *call.handle is NULL unless it
// succeeds.
comm_status_t runCollective(const CollectiveCall& call) noexcept;

}  // namespace comm::api
