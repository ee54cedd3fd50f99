// Sends and receives a user posts, alone or as a batch: one operation whose
// messages travel on the communicator's user tags, so they never meet a
// collective's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/communicator.h"
#include "core/operation.h"

namespace comm::core {

struct UserMessage {
  bool isSend;
  int peer;  // rank in the communicator
  int tag;   // the user's tag, 0..COMM_TAG_MAX
  void* data;
  size_t bytes;
};

// Posts `messages` in order as one operation; `what` names it in error
// messages (formatted only when one is written). The caller waits for it or
// detaches it to the progress thread.
std::shared_ptr<MessageOperation> postUserMessages(const std::shared_ptr<Communicator>& comm,
                                                   std::span<const UserMessage> messages,
                                                   std::function<std::string()> what);

}  // namespace comm::core
