// What a communicator keeps between its collectives so that steady traffic
// does not allocate: the running collective's message bookkeeping (emptied,
// not freed, when it ends) and a staging area for chunked receives. Only one
// collective of a communicator runs at a time (Communicator::runCollective),
// so it owns them all while it runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "core/pending.h"
#include "core/signature.h"

namespace comm::core {

struct CollectiveBuffers {
  std::deque<transport::Request> requests;  // addresses stay put as it grows
  std::vector<Pending> pending;
  std::unique_ptr<char[]> staging;  // CollectiveContext::kStagingBytes, made on first use
  // The algorithm each kind of collective took last, for how many bytes
  // (algo::choose): walking the selection table costs as much as a small
  // collective's own work on the node board.
  struct Choice {
    size_t bytes = SIZE_MAX;  // none yet
    std::string_view algorithm;
  };
  std::array<Choice, kCollectiveKinds> lastChoice;
};

}  // namespace comm::core
