// Fuzz target: headers a peer sends comm's tcp transport
// (transport/tcp/tcp_wire.h), 32 bytes each. Nothing may crash, and a
// header checkHeader() lets through has a known kind and announces no
// eager payload larger than kEagerBytes (so nothing is ever sized by a
// larger claim), and control messages (clear-to-send, withdrawal, goodbye)
// carry none.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "transport/tcp/tcp_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace comm::transport::tcp;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (size_t at = 0; at + sizeof(Header) <= bytes.size(); at += sizeof(Header)) {
    const Header header = decodeHeader(bytes.substr(at, sizeof(Header)));
    if (!checkHeader(header).empty()) continue;
    switch (header.kind) {
      case Kind::kEager:
        if (payloadBytes(header) > kEagerBytes) std::abort();
        break;
      case Kind::kClearToSend:
        if (header.size != 0 || payloadBytes(header) != 0) std::abort();
        break;
      case Kind::kRequestToSend:
        if (payloadBytes(header) != 0) std::abort();
        break;
      case Kind::kGoodbye:
      case Kind::kWithdrawn:
        if (header.size != 0 || payloadBytes(header) != 0) std::abort();
        break;
      case Kind::kPayload: break;
      default: std::abort();
    }
  }
  return 0;
}
