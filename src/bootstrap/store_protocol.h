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
//     kErasePrefix prefix (erases every key that starts with it)
//     kSetIfAbsent key value (sets it only when the key does not exist)
//   response = id:u64 status:u8 result
//     kOk    -> value (kGet, kCheck; kSetIfAbsent: the key's value after it, the
//               one given or the one there before), new value:i64 (kAdd),
//               nothing (kSet, kWait, kErasePrefix)
//     kMissing (kCheck only)    kError -> message
//
// The id lets a client drop a late answer to a call that already gave up on
// its deadline (the server answers kGet/kWait only when the keys exist).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace comm::bootstrap {

enum class StoreOp : uint8_t {
  kSet = 1,
  kGet = 2,
  kWait = 3,
  kAdd = 4,
  kCheck = 5,
  kErasePrefix = 6,
  kSetIfAbsent = 7
};
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
// arrived, else nullopt. Throws COMM_ERR_BOOTSTRAP for a length over
// `limit`, before any of the body has to be held.
inline std::optional<uint32_t> completeFrame(std::string_view buffer, size_t limit = kMaxFrameBytes) {
  if (buffer.size() < kFrameHeaderBytes) return std::nullopt;
  uint32_t body = FrameReader(buffer.substr(0, kFrameHeaderBytes)).u32();
  if (body > limit) fail(COMM_ERR_BOOTSTRAP, "a message of {} bytes, over the limit of {} bytes", body, limit);
  if (buffer.size() - kFrameHeaderBytes < body) return std::nullopt;
  return body;
}

// One request, decoded.
struct StoreRequest {
  StoreOp op{};
  uint64_t id = 0;
  std::vector<std::string> keys;  // kWait: every key named; kErasePrefix: the prefix; the others: their one key
  std::string value;              // kSet, kSetIfAbsent
  int64_t delta = 0;              // kAdd
};

// Decodes the body of a request frame. Throws COMM_ERR_BOOTSTRAP naming
// what is wrong: an unknown operation, a body cut short or too long, a key
// or value over the limits given.
inline StoreRequest decodeRequest(std::string_view body, size_t maxKeyBytes, size_t maxValueBytes) {
  FrameReader reader(body);
  StoreRequest request;
  const uint8_t op = reader.u8();
  request.id = reader.u64();
  auto key = [&] {
    std::string read = reader.bytes();
    if (read.size() > maxKeyBytes) {
      fail(COMM_ERR_BOOTSTRAP, "a key of {} bytes, over the limit of {} bytes", read.size(), maxKeyBytes);
    }
    request.keys.push_back(std::move(read));
  };
  const char* name = nullptr;
  switch (static_cast<StoreOp>(op)) {
    case StoreOp::kSet:
    case StoreOp::kSetIfAbsent:
      name = static_cast<StoreOp>(op) == StoreOp::kSet ? "set" : "setIfAbsent";
      key();
      request.value = reader.bytes();
      if (request.value.size() > maxValueBytes) {
        fail(COMM_ERR_BOOTSTRAP, "{}('{}'): a value of {} bytes, over the limit of {} bytes", name, request.keys[0],
             request.value.size(), maxValueBytes);
      }
      break;
    case StoreOp::kGet:
      name = "get";
      key();
      break;
    case StoreOp::kCheck:
      name = "check";
      key();
      break;
    case StoreOp::kErasePrefix:
      name = "erase";
      key();
      break;
    case StoreOp::kAdd:
      name = "add";
      key();
      request.delta = reader.i64();
      break;
    case StoreOp::kWait:
      name = "wait";
      // Each key takes at least its length's bytes: a count past that is a
      // lie that the reads below catch, without reserving room for it.
      for (uint32_t count = reader.u32(); count > 0; --count) key();
      break;
    default: fail(COMM_ERR_BOOTSTRAP, "unknown operation {}", op);
  }
  if (!reader.done()) fail(COMM_ERR_BOOTSTRAP, "malformed {} request (trailing bytes)", name);
  request.op = static_cast<StoreOp>(op);
  return request;
}

}  // namespace comm::bootstrap
