// The transport a world uses: peers on this node over direct shared memory
// (shm/shm_transport.h), everyone else over the network: comm's own TCP transport
// (tcp/tcp_transport.h) or libfabric (ofi/ofi_transport.h), as the table of
// transports in hybrid_transport.cc orders them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/options.h"
#include "transport/transport.h"

namespace comm::transport {

// Peers on the node go over a ShmTransport unless `options.shm.mode` is
// kOff; the rest, and peers on the node that offer no direct path, over the
// network transport Options::provider names. The provider never turns the
// direct path off: "tcp" or "shm" (libfabric's) between ranks of one node
// needs shm.mode kOff too.
std::unique_ptr<Transport> createTransport(const Options& options);

// The transport for peers off the direct path, the first network row of the
// table that takes `options` (options.shm is not read): comm's own TCP for provider "tcp"
// (tcp/tcp_transport.h), and for "" when the job spans nodes and
// FI_PROVIDER names no libfabric provider; libfabric otherwise.
std::unique_ptr<Transport> createNetworkTransport(const Options& options);

// A row of the table of transports, in the table's order, for tests that
// cover every transport.
struct TransportRow {
  std::string name;
  bool ranksAreThreads;  // its ranks are threads of one process, never processes
};
std::vector<TransportRow> transportRows();
// The transport of the row `name`, made with `options` whichever row the
// settings would choose; throws comm::Error (COMM_ERR_INVALID_ARGUMENT)
// for a name the table lacks.
std::unique_ptr<Transport> createTransportOfRow(std::string_view name, const Options& options);

// What Options::provider (the "provider" setting) can name that works here:
// comm's own tcp, then the usable libfabric providers.
std::vector<std::string> availableProviders();

}  // namespace comm::transport
