// Fuzz target: a peer without the secret talking to either side of the
// handshake (common/handshake.h). The first byte picks the side and how
// the rest is cut into pieces; the rest is what the peer sends. Nothing may
// crash or take more than the handshake asks for, and no input may open
// the handshake: that would take guessing an HMAC-SHA256.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/handshake.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool accepting = (data[0] & 1) != 0;
  const size_t piece = 1 + (data[0] >> 1);
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  comm::Handshake handshake = accepting ? comm::Handshake::accepting("fuzz secret 0123456789abcdef", "fuzz")
                                        : comm::Handshake::connecting("fuzz secret 0123456789abcdef", "fuzz", 7);
  while (!rest.empty() && handshake.wanted() > 0) {
    handshake.takeOutput();
    const std::string_view part = rest.substr(0, std::min(piece, handshake.wanted()));
    handshake.feed(part);
    rest.remove_prefix(part.size());
  }
  if (handshake.state() == comm::Handshake::State::kDone) std::abort();
  return 0;
}
