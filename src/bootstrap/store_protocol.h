// Wire format of the rendezvous store, shared by StoreServer and StoreClient.
//
// A connection opens with the handshake of common/handshake.h (context
// kStoreContext); after it, every message is a frame: a 4-byte little-endian body length, then the body.
// Integers are little-endian so that nodes of any byte order agree; byte
// strings are a 4-byte length followed by the bytes.
//
//   request  = op:u8 id:u64 arguments
//     kSet   key value          kGet key          kCheck key
//     kWait  count:u32 key*     kAdd key delta:i64
//   response = id:u64 status:u8 result
//     kOk    -> value (kGet, kCheck), new value:i64 (kAdd), nothing (kSet, kWait)
//     kMissing (kCheck only)    kError -> message
//
// The id lets a client drop a late answer to a call that already gave up on
// its deadline (the server answers kGet/kWait only when the keys exist).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace comm::bootstrap {

enum class StoreOp : uint8_t { kSet = 1, kGet = 2, kWait = 3, kAdd = 4, kCheck = 5 };
enum class StoreStatus : uint8_t { kOk = 0, kMissing = 1, kError = 2 };

// What a store connection's proof of the secret is bound to: no other
// kind of connection can reuse it.
inline constexpr std::string_view kStoreContext = "comm store";

inline constexpr size_t kFrameHeaderBytes = 4;
// Bounds the memory a corrupt or hostile length can make either side allocate.
inline constexpr uint32_t kMaxFrameBytes = 1u << 30;

class FrameWriter {
 public:
  FrameWriter() : bytes_(kFrameHeaderBytes, '\0') {}

  FrameWriter& u8(uint8_t value) {
    bytes_.push_back(static_cast<char>(value));
    return *this;
  }
  FrameWriter& u32(uint32_t value) { return little(value, 4); }
  FrameWriter& u64(uint64_t value) { return little(value, 8); }
  FrameWriter& i64(int64_t value) { return u64(static_cast<uint64_t>(value)); }
  FrameWriter& bytes(std::string_view value) {
    if (value.size() > kMaxFrameBytes) {
      fail(COMM_ERR_INVALID_ARGUMENT, "store: a {}-byte value exceeds the {}-byte limit", value.size(), kMaxFrameBytes);
    }
    u32(static_cast<uint32_t>(value.size()));
    bytes_.append(value);
    return *this;
  }

  // The finished frame, header included; leaves the writer empty.
  std::string finish() {
    const size_t body = bytes_.size() - kFrameHeaderBytes;
    if (body > kMaxFrameBytes) {
      fail(COMM_ERR_INVALID_ARGUMENT, "store: a {}-byte message exceeds the {}-byte limit", body, kMaxFrameBytes);
    }
    for (size_t i = 0; i < kFrameHeaderBytes; ++i) bytes_[i] = static_cast<char>((body >> (8 * i)) & 0xff);
    return std::move(bytes_);
  }

 private:
  FrameWriter& little(uint64_t value, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    return *this;
  }

  std::string bytes_;
};

// Reads one frame body; every read past its end throws COMM_ERR_BOOTSTRAP.
class FrameReader {
 public:
  explicit FrameReader(std::string_view body) : rest_(body) {}

  uint8_t u8() { return static_cast<uint8_t>(little(1)); }
  uint32_t u32() { return static_cast<uint32_t>(little(4)); }
  uint64_t u64() { return little(8); }
  int64_t i64() { return static_cast<int64_t>(little(8)); }
  std::string bytes() {
    const uint32_t size = u32();
    return std::string(take(size));
  }
  bool done() const { return rest_.empty(); }

 private:
  uint64_t little(size_t width) {
    const std::string_view raw = take(width);
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) value |= uint64_t{static_cast<uint8_t>(raw[i])} << (8 * i);
    return value;
  }
  std::string_view take(size_t size) {
    if (size > rest_.size()) {
      fail(COMM_ERR_BOOTSTRAP, "store: malformed message ({} bytes wanted, {} left)", size, rest_.size());
    }
    std::string_view taken = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return taken;
  }

  std::string_view rest_;
};

// The body length of the frame at the start of `buffer` once all of it has
// arrived, else nullopt. Throws COMM_ERR_BOOTSTRAP for a length over the limit.
inline std::optional<uint32_t> completeFrame(std::string_view buffer) {
  if (buffer.size() < kFrameHeaderBytes) return std::nullopt;
  uint32_t body = FrameReader(buffer.substr(0, kFrameHeaderBytes)).u32();
  if (body > kMaxFrameBytes) {
    fail(COMM_ERR_BOOTSTRAP, "store: message of {} bytes exceeds the {}-byte limit", body, kMaxFrameBytes);
  }
  if (buffer.size() - kFrameHeaderBytes < body) return std::nullopt;
  return body;
}

}  // namespace comm::bootstrap
