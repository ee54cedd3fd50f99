// What comm's own TCP transport (tcp_transport.h) alone is created with; the
// interface, the store's address and the job's secret it shares with the
// other transports (transport/options.h).
#pragma once

#include <chrono>
#include <cstddef>

namespace comm::transport {

struct TcpOptions {
  // How long connect() may wait for its peers' connections (what is left of
  // comm_init's COMM_TIMEOUT); 0: two minutes.
  std::chrono::milliseconds connectTimeout{0};
  // Bytes of messages that arrived before their receive that the transport
  // holds for one peer; past it the rest stays in the peer's socket until
  // receives take some (back-pressure). 0: kDefaultUnexpectedBytes. The
  // tcp_unexpected_bytes setting.
  size_t maxUnexpectedBytes = 0;
};

}  // namespace comm::transport
