// What comm's tcp transport sends on a connection once both ranks have
// proven the job's secret: each message is a Header, then its payload.
//
// Messages up to kEagerBytes go whole (kEager). A larger one is announced
// (kRequestToSend) and its payload follows (kPayload) only once the receiver
// has a receive for it and says so (kClearToSend): it then lands straight in
// that receive's buffer, never in a buffer of ours, and a sender can never
// fill the receiver's memory with messages nobody has asked for yet.
// A sender whose operation failed before the go-ahead came answers it with
// kWithdrawn instead of the payload: its buffer may be gone, and the
// receiver's receive fails naming it rather than waiting.
// kGoodbye, the last thing a rank sends before it closes its connections at
// a clean shutdown, lets the peer tell that end from a crash and stay quiet.
//
// Nothing a peer says is believed before checkHeader() has looked at it: a
// size is only a claim, and memory is never sized by a claim alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace comm::transport::tcp {

enum class Kind : uint32_t {
  kEager = 0,
  kRequestToSend = 1,
  kClearToSend = 2,
  kPayload = 3,
  kGoodbye = 4,
  kWithdrawn = 5
};

// What precedes every message on a connection.
struct Header {
  uint64_t tag;
  uint64_t size;  // the message's bytes (kClearToSend: 0)
  Kind kind;
  uint32_t id;      // kRequestToSend, kClearToSend: the sender's number for the message; kPayload, kWithdrawn: the
                    // receiver's
  uint32_t answer;  // kClearToSend: the receiver's number for it
  uint32_t unused;
};
static_assert(sizeof(Header) == 32);

// Reads land in an inbox of this size first, so one recv() brings a small
// message with its header.
inline constexpr size_t kInboxBytes = 64 * 1024;
// Messages up to this size go without waiting for a go-ahead. It covers the
// chunks collectives cut large messages into for this transport (at most
// twice algo/blocks/pipeline.h's kChunkBytes): a go-ahead crosses the link against
// the data flowing the other way, and on a shaped link it waited behind that
// data long enough to halve an all_to_all's speed. What a peer may send
// before its receives are posted stays bounded by the unexpected-byte limit.
inline constexpr size_t kEagerBytes = 512 * 1024;

// The bytes that follow a header.
inline size_t payloadBytes(const Header& header) {
  return header.kind == Kind::kEager || header.kind == Kind::kPayload ? header.size : 0;
}

// The header at the start of `bytes` (at least sizeof(Header) of them).
inline Header decodeHeader(std::string_view bytes) {
  Header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  return header;
}

// Why `header` cannot have come from a well-behaved peer, or "" when it
// can: an unknown kind, an eager message larger than kEagerBytes, a
// clear-to-send, withdrawal or goodbye that carries a size.
inline std::string checkHeader(const Header& header) {
  switch (header.kind) {
    case Kind::kEager:
      if (header.size > kEagerBytes) {
        return fmt::format("an eager message of {} bytes (tag {:#x}), over the {}-byte limit for one", header.size,
                           header.tag, kEagerBytes);
      }
      return "";
    case Kind::kClearToSend:
      if (header.size != 0) return fmt::format("a clear-to-send carrying {} bytes", header.size);
      return "";
    case Kind::kGoodbye:
      if (header.size != 0) return fmt::format("a goodbye carrying {} bytes", header.size);
      return "";
    case Kind::kWithdrawn:
      if (header.size != 0) return fmt::format("a withdrawal carrying {} bytes", header.size);
      return "";
    case Kind::kRequestToSend:
    case Kind::kPayload: return "";
  }
  return fmt::format("a message of unknown kind {}", static_cast<uint32_t>(header.kind));
}

}  // namespace comm::transport::tcp
