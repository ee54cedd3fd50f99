#include "core/point_to_point.h"

#include "core/tags.h"

namespace comm::core {

std::shared_ptr<MessageOperation> postUserMessages(const std::shared_ptr<Communicator>& comm,
                                                   std::span<const UserMessage> messages,
                                                   std::function<std::string()> what) {
  int64_t bytes = 0;
  for (const UserMessage& m : messages) bytes += static_cast<int64_t>(m.bytes);
  const bool one = messages.size() == 1;
  const uint32_t kind = !one                 ? FlightRecorder::kBatchKind
                        : messages[0].isSend ? FlightRecorder::kSendKind
                                             : FlightRecorder::kRecvKind;
  const uint64_t flight = comm->flight().startMessage(kind, one ? messages[0].peer : -1, bytes);
  auto op = std::make_shared<MessageOperation>(comm, std::move(what), messages.size(), flight);
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
