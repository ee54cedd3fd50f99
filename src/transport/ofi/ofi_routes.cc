// Which of libfabric's providers serves each peer: the endpoints the ofi
// transport opens (shm for peers on the node and a network provider for the
// rest, or one forced provider for all), their addresses, and the choice
// per peer, which both ends of a pair make alike.
#include "transport/ofi/ofi_routes.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/error.h"
#include "common/log.h"
#include "transport/network_interface.h"
#include "transport/ofi/ofi_transport.h"

namespace comm::transport {
namespace {

constexpr size_t kMaxChunkBytes = size_t{1} << 30;
constexpr const char* kShm = "shm";
constexpr const char* kNetwork = "tcp;ofi_rxm";

// "tcp" means tcp under rxm, the layering this transport is tested with,
// rather than whatever RDM flavour of tcp a libfabric version prefers.
// FI_PROVIDER separates layered providers with commas, prov_name with
// semicolons.
std::string normaliseProvider(std::string name) {
  std::replace(name.begin(), name.end(), ',', ';');
  return name == "tcp" ? kNetwork : name;
}

std::string forcedProvider(const Options& options) {
  if (!options.provider.empty()) return normaliseProvider(options.provider);
  const std::string fromEnvironment = fabricProviderVariable();
  // "^a,b" excludes providers rather than naming one; libfabric applies it.
  if (fromEnvironment.empty() || fromEnvironment.front() == '^') return {};
  return normaliseProvider(fromEnvironment);
}

// libfabric 1.17's shm provider names its region after the process id
// (/dev/shm/<pid>:0:0). A region left by a killed process whose pid this
// process now has makes fi_enable fail with EBUSY; no live process can own
// that name but this one, so it is safe to remove before opening.
void removeStaleShmRegion() {
  std::string path = fmt::format("/dev/shm/{}:0:0", getpid());
  unlink(path.c_str());
}

EndpointConfig configFor(const std::string& provider, const Options& options) {
  EndpointConfig config{provider, {}, {}};
  if (provider.starts_with("tcp")) {
    if (options.singleNode) {
      config.node = "127.0.0.1";
    } else if (std::getenv("FI_TCP_IFACE") == nullptr) {
      // FI_TCP_IFACE, when set, is applied by libfabric itself. Otherwise
      // libfabric's tcp takes the interface comm's own would: left to
      // itself it may take a docker bridge.
      const NetworkInterface chosen = chooseInterface(options.tcpInterface, options.masterAddr);
      config.domain = chosen.name;
      log::info("fabric: tcp between nodes on {}: {}", chosen.name, chosen.why);
    }
  }
  return config;
}

const EndpointAddress* findProvider(const std::vector<EndpointAddress>& offered, const std::string& provider) {
  for (const EndpointAddress& address : offered) {
    if (address.provider == provider) return &address;
  }
  return nullptr;
}

std::string listProviders(const std::vector<EndpointAddress>& offered) {
  std::string names;
  for (const EndpointAddress& address : offered) names += (names.empty() ? "" : ", ") + address.provider;
  return names.empty() ? "none" : names;
}

// "0-3,5,7-8"
std::string formatRanks(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

OfiRoutes::OfiRoutes(const Options& options) {
  std::string forced = forcedProvider(options);
  forced_ = !forced.empty();
  // Slots are filled before any route points at them and never move after.
  slots_.reserve(2);
  if (forced_) {
    openEndpoint(configFor(forced, options), options);
    log::debug("fabric: provider {} carries traffic to every peer", slots_[0].endpoint->provider());
    return;
  }
  struct Candidate {
    const char* provider;
    const char* withoutIt;
  };
  std::string failures;
  for (Candidate candidate : {Candidate{kShm, "peers on this node will use tcp"},
                              Candidate{kNetwork, "only peers on this node are reachable"}}) {
    try {
      openEndpoint(configFor(candidate.provider, options), options);
    } catch (const Error& error) {
      failures += fmt::format("{}{}", failures.empty() ? "" : "; ", error.what());
      log::warn("fabric: {} unavailable, {}: {}", candidate.provider, candidate.withoutIt, error.what());
    }
  }
  if (slots_.empty()) fail(COMM_ERR_TRANSPORT, "fabric: no provider could be opened: {}", failures);
}

void OfiRoutes::openEndpoint(const EndpointConfig& config, const Options& options) {
  if (config.provider == kShm) removeStaleShmRegion();
  Slot& slot = slots_.emplace_back();
  try {
    slot.endpoint = std::make_unique<OfiEndpoint>(config);
  } catch (...) {
    slots_.pop_back();
    throw;
  }
  size_t limit = options.ofi.maxChunkBytes != 0 ? options.ofi.maxChunkBytes : kMaxChunkBytes;
  slot.chunk = std::min(slot.endpoint->maxMessageSize(), limit);
}

std::vector<uint8_t> OfiRoutes::localAddress() const {
  std::vector<EndpointAddress> addresses;
  for (const Slot& slot : slots_) addresses.push_back({slot.endpoint->provider(), slot.endpoint->address()});
  return encodeAddresses(addresses);
}

std::pair<OfiRoutes::Slot*, const EndpointAddress*> OfiRoutes::chooseSlot(int rank, bool sameNode,
                                                                          const std::vector<EndpointAddress>& offered) {
  if (forced_) {
    Slot& only = slots_.front();
    const EndpointAddress* address = findProvider(offered, only.endpoint->provider());
    if (address == nullptr) {
      fail(COMM_ERR_TRANSPORT, "fabric: rank {} offers {} but this rank uses {} for every peer", rank,
           listProviders(offered), only.endpoint->provider());
    }
    return {&only, address};
  }
  // The choice depends only on facts both sides see alike (sameNode and the two
  // offers), so both ends of a pair pick the same provider.
  Slot* shm = nullptr;
  Slot* network = nullptr;
  for (Slot& slot : slots_) (slot.endpoint->provider() == kShm ? shm : network) = &slot;
  if (sameNode && shm != nullptr) {
    if (const EndpointAddress* address = findProvider(offered, kShm)) return {shm, address};
  }
  if (network != nullptr) {
    if (const EndpointAddress* address = findProvider(offered, network->endpoint->provider())) {
      return {network, address};
    }
  }
  std::vector<EndpointAddress> mine;
  for (const Slot& slot : slots_) mine.push_back({slot.endpoint->provider(), {}});
  fail(COMM_ERR_TRANSPORT, "fabric: no provider reaches rank {} on {}: it offers {}, this rank offers {}", rank,
       sameNode ? "this node" : "another node", listProviders(offered), listProviders(mine));
}

void OfiRoutes::connect(int selfRank, const std::vector<PeerInfo>& peers) {
  if (!routes_.empty()) fail(COMM_ERR_INVALID_USAGE, "fabric: connect called twice");
  if (selfRank < 0 || static_cast<size_t>(selfRank) >= peers.size()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "fabric: rank {} is outside a communicator of {} ranks", selfRank, peers.size());
  }
  std::vector<Route> routes(peers.size());
  std::vector<int> withoutShm;
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    int peer = static_cast<int>(rank);
    std::vector<EndpointAddress> offered = decodeAddresses(peers[rank].address, peer);
    auto [slot, address] = chooseSlot(peer, peers[rank].sameNode, offered);
    routes[rank] = {slot, slot->endpoint->insert(address->name, peer)};
    slot->used = true;
    if (peers[rank].sameNode && slot->endpoint->provider() != kShm) withoutShm.push_back(peer);
  }
  routes_ = std::move(routes);
  // Without a local shm endpoint the constructor has said so already.
  if (!withoutShm.empty() && !forced_ && slots_.size() > 1) {
    log::warn("fabric: ranks {} on this node opened no shm endpoint; reaching them over {}", formatRanks(withoutShm),
              slots_.back().endpoint->provider());
  }
  logRoutes();
}

void OfiRoutes::logRoutes() const {
  if (!log::enabled(log::Level::kInfo)) return;
  for (const Slot& slot : slots_) {
    std::vector<int> ranks;
    for (size_t rank = 0; rank < routes_.size(); ++rank) {
      if (routes_[rank].slot == &slot) ranks.push_back(static_cast<int>(rank));
    }
    if (!ranks.empty()) {
      log::info("fabric: {} serves ranks {} (chunks of {} bytes)", slot.endpoint->provider(), formatRanks(ranks),
                slot.chunk);
    }
  }
}

const OfiRoutes::Route& OfiRoutes::routeTo(int peer) const {
  if (peer < 0 || static_cast<size_t>(peer) >= routes_.size()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "fabric: no route to rank {} ({} ranks connected)", peer, routes_.size());
  }
  return routes_[peer];
}

std::string fabricProviderVariable() {
  const char* value = std::getenv("FI_PROVIDER");
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace comm::transport
