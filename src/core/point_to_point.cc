#include "core/point_to_point.h"

#include "core/tags.h"

namespace comm::core {

std::shared_ptr<MessageOperation> postUserMessages(const std::shared_ptr<Communicator>& comm,
                                                   std::span<const UserMessage> messages,
                                                   std::function<std::string()> what) {
  auto op = std::make_shared<MessageOperation>(comm, std::move(what), messages.size());
  for (const UserMessage& m : messages) {
    uint64_t tag = tags::make(comm->id(), tags::Kind::kUser, 0, static_cast<uint32_t>(m.tag));
    if (m.isSend) {
      op->postSend(m.peer, tag, m.data, m.bytes);
    } else {
      op->postRecv(m.peer, tag, m.data, m.bytes);
    }
  }
  return op;
}

}  // namespace comm::core
