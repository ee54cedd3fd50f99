// The endpoints libfabric's transport opened, one per provider, and the one
// that serves each peer (ofi_routes.cc says how it is chosen). Not
// thread-safe: the transport calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "transport/ofi/ofi_address.h"
#include "transport/ofi/ofi_endpoint.h"
#include "transport/ofi/ofi_op.h"
#include "transport/options.h"
#include "transport/transport.h"

namespace comm::transport {

class OfiRoutes {
 public:
  struct Slot {
    std::unique_ptr<OfiEndpoint> endpoint;
    size_t chunk = 0;
    // Some peer is routed here. Idle endpoints are not progressed: polling
    // tcp's sockets would tax every progress() of a job that only uses shm.
    bool used = false;
    OfiOpQueue sendBacklog;
    OfiOpQueue recvBacklog;
  };
  struct Route {
    Slot* slot = nullptr;
    fi_addr_t address = FI_ADDR_NOTAVAIL;
  };

  // Opens the endpoint of the provider Options::provider or FI_PROVIDER
  // names, else shm's and tcp;ofi_rxm's (those that open); throws
  // comm::Error (COMM_ERR_TRANSPORT) when none does.
  explicit OfiRoutes(const Options& options);

  // Every endpoint's name, for the peers.
  std::vector<uint8_t> localAddress() const;
  // Routes every rank (peers[selfRank] is this one) to an endpoint both
  // ends have. Called once.
  void connect(int selfRank, const std::vector<PeerInfo>& peers);
  const Route& routeTo(int peer) const;
  std::vector<Slot>& slots() { return slots_; }
  const std::vector<Slot>& slots() const { return slots_; }

 private:
  void openEndpoint(const EndpointConfig& config, const Options& options);
  std::pair<Slot*, const EndpointAddress*> chooseSlot(int rank, bool sameNode,
                                                      const std::vector<EndpointAddress>& offered);
  void logRoutes() const;

  std::vector<Slot> slots_;
  std::vector<Route> routes_;
  bool forced_ = false;
};

}  // namespace comm::transport
