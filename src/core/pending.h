// A posted message the engine is waiting for.
#pragma once

#include "transport/transport.h"

namespace comm::core {

struct Pending {
  transport::Request* request;
  int peer;     // rank in the communicator
  bool isRecv;  // receives are withdrawn when a wait gives up, sends once the operation is abandoned
};

}  // namespace comm::core
