// What a communicator keeps between its collectives so that steady traffic
// does not allocate: the running collective's message bookkeeping (emptied,
// not freed, when it ends), a staging area for chunked receives and the
// algorithms' scratch areas. Only one collective of a communicator runs at a
// time (Communicator::runCollective), so it owns them all while it runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/pending.h"
#include "core/signature.h"

namespace comm::core {

// The scratch areas an algorithm may hold at once (CollectiveContext::scratch).
enum class Scratch : uint8_t {
  kLanding,    // where messages land before they are reduced or passed on
  kResult,     // where a rank builds what it sends on, around an inner algorithm's landing area
  kPhase,      // what a hierarchical algorithm carries from one phase (flat algorithm) to the next
  kPeerReads,  // where pieces of other ranks' memory land when read in place (algo/blocks/node_buffers.h)
};
inline constexpr size_t kScratchAreas = 4;

struct CollectiveBuffers {
  std::deque<transport::Request> requests;  // addresses stay put as it grows
  std::vector<Pending> pending;
  std::unique_ptr<char[]> staging;  // CollectiveContext::kStagingBytes, made on first use
  // Grown to the largest size asked for, kept until the communicator goes.
  struct ScratchArea {
    std::unique_ptr<char[]> data;
    size_t bytes = 0;
  };
  std::array<ScratchArea, kScratchAreas> scratch;
  // What algo/ keeps per communicator between collectives (its selection
  // cache, algo/selection/selection.h): core only holds it, and frees it with
  // the communicator.
  std::shared_ptr<void> algorithmState;
};

}  // namespace comm::core
