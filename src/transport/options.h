// What a world's transport is created with (hybrid_transport.h): the facts
// of the job every transport may read, and each transport's own options,
// declared in its folder. Outside the transports' folders only this header
// and the hybrid transport include their headers (scripts/check-layers.sh).
#pragma once

#include <string>

#include "transport/ofi/ofi_options.h"
#include "transport/shm/shm_options.h"
#include "transport/tcp/tcp_options.h"

namespace comm::transport {

struct Options {
  // The network transport, for the peers the direct shared-memory path does
  // not serve: "tcp" is comm's own TCP transport (tcp/tcp_transport.h); any
  // other name is a libfabric provider ("shm", "tcp;ofi_rxm",
  // "verbs;ofi_rxm"...); "" is comm's tcp for a job across nodes, else
  // libfabric's choice per peer (its shm on the node, tcp;ofi_rxm between
  // nodes, or what FI_PROVIDER, when set, names).
  std::string provider;
  // Every rank is on this node: bind the network provider to loopback.
  bool singleNode = false;
  // Otherwise tcp (comm's own and libfabric's) uses this interface ("eth1";
  // the tcp_iface setting, COMM_TCP_IFACE); "" lets the transport choose.
  std::string tcpInterface;
  // Where the rendezvous store is: tcp prefers the interface that reaches it.
  std::string masterAddr;
  // What a peer proves before comm's tcp transport accepts its connection
  // (common/handshake.h): the job's secret. libfabric's endpoints prove
  // nothing; they learn each other's addresses only through the store,
  // which asks the same proof (docs/security.md).
  std::string secret;

  // Each transport's own. shm.mode kOff leaves the peers on the node to the
  // network transport.
  ShmOptions shm;
  TcpOptions tcp;
  OfiOptions ofi;
};

}  // namespace comm::transport
