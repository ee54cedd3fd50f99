// What a communicator keeps between its collectives so that steady traffic
// does not allocate: the running collective's message bookkeeping (emptied,
// not freed, when it ends) and a staging area for chunked receives. Only one
// collective of a communicator runs at a time (Communicator::runCollective),
// so it owns them all while it runs.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "core/pending.h"

namespace comm::core {

struct CollectiveBuffers {
  std::deque<transport::Request> requests;  // addresses stay put as it grows
  std::vector<Pending> pending;
  std::unique_ptr<char[]> staging;  // CollectiveContext::kStagingBytes, made on first use
};

}  // namespace comm::core
