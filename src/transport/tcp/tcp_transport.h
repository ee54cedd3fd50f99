// comm's own TCP transport (provider "tcp"): one non-blocking connection per
// peer (connector.h), messages framed as {tag, size} + payload (tcp_wire.h)
// and matched to receives here (message_engine.h, with the engine
// matching_engine.h shares with shm).
//
// Why not libfabric's tcp;ofi_rxm: on loopback fi_pingpong over it is
// markedly slower, in latency and in bandwidth, than a plain polled socket
// (docs/performance.md, "Point-to-point"). rxm's rendezvous
// and its own progress engine cost more than the kernel's copies; a socket
// we read ourselves costs one epoll_wait when idle, small messages arrive
// in one recv() with their headers, and large payloads go straight between
// the kernel and the caller's buffer.
#pragma once

#include <memory>

#include "transport/options.h"
#include "transport/transport.h"

namespace comm::transport {

// What providerFor() says for peers reached this way.
inline constexpr const char* kTcpProvider = "tcp";

// Bytes of early messages (arrived before their receive) held for one peer
// when TcpOptions::maxUnexpectedBytes does not say.
inline constexpr size_t kDefaultUnexpectedBytes = size_t{256} << 20;

// Listens at once (on loopback when options.singleNode, else on the
// interface options.tcpInterface names or the first one that is up); connect()
// then opens one connection per peer. Throws comm::Error (COMM_ERR_TRANSPORT)
// naming the cause when a socket cannot be made.
std::unique_ptr<Transport> createTcpTransport(const Options& options);

}  // namespace comm::transport
