// A checked collective call handed to the communicator: the body that runs
// it in a CollectiveContext, blocking or behind a handle, on host memory or
// on the host memory that stands for device buffers (docs/cuda.md).
#pragma once

#include "api/collective_call.h"
#include "api/collective_checks.h"

namespace comm::api {

// Launches `call`, checked into `checked` (its memory is prepared here, and
// its per-rank tables move into the body).
void launchCall(const CollectiveCall& call, CheckedCall& checked);

}  // namespace comm::api
