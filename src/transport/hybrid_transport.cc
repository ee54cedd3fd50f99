// Routes each peer to the direct shared-memory transport or to the network
// one (comm's own tcp, or libfabric) and speaks for both: one address blob,
// one progress(), one cancel(). Which transports there are, and which one
// serves which peers, is the table kTransports below: the one place outside
// its folder that names a transport (docs/architecture.md, "Adding a
// transport").
#include "transport/hybrid_transport.h"

#include <cstring>

#include <fmt/ranges.h>

#include "common/error.h"
#include "common/log.h"
#include "transport/ofi/ofi_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/threads/threads_transport.h"

namespace comm::transport {
namespace {

constexpr uint8_t kBlobVersion = 1;

// Which peers a transport serves.
enum class Reach {
  kNode,     // those on this node that offer it an address: the direct path
  kNetwork,  // every other peer (on the node too when the direct path is off)
};

// One transport: the first row of each reach whose takes() accepts the
// settings serves those peers.
struct Row {
  const char* name;  // what the logs and providerFor() call it
  Reach reach;
  bool (*takes)(const Options& options);
  std::unique_ptr<Transport> (*create)(const Options& options);
  bool ranksAreThreads = false;  // it connects threads of one process, never processes
};

// comm's own tcp is the default: between hosts it carries collectives as
// fast as libfabric's tcp;ofi_rxm, answers small messages in about half the
// time, starts in milliseconds where libfabric's initialisation takes about
// half a second, and admits only peers that prove the job's secret
// (docs/performance.md "Across hosts", docs/security.md). libfabric serves
// what names it: COMM_PROVIDER (verbs;ofi_rxm on an RDMA fabric) or
// FI_PROVIDER; and a job on one node with direct shared memory off, where
// its shm provider beats any socket.
bool takesTcp(const Options& options) {
  const bool defaultToTcp = options.provider.empty() && fabricProviderVariable().empty() && !options.singleNode;
  return options.provider == kTcpProvider || defaultToTcp;
}

constexpr Row kTransports[] = {
    {kShmDirectProvider, Reach::kNode, [](const Options& options) { return options.shm.mode != ShmMode::kOff; },
     [](const Options& options) { return createShmTransport(options.shm); }},
    {kThreadsProvider, Reach::kNetwork, [](const Options& options) { return options.provider == kThreadsProvider; },
     [](const Options&) { return createThreadsTransport(); }, true},
    {kTcpProvider, Reach::kNetwork, takesTcp, createTcpTransport},
    {"ofi", Reach::kNetwork, [](const Options&) { return true; }, createOfiTransport},
};

// The transport that serves the peers of `reach` under these settings, or
// null when none does.
std::unique_ptr<Transport> createFor(Reach reach, const Options& options) {
  for (const Row& row : kTransports) {
    if (row.reach == reach && row.takes(options)) return row.create(options);
  }
  return nullptr;
}

// The blob: version, the shared-memory part's length (4 bytes), that part,
// then the network part. Either part may be empty: that transport is absent.
struct Parts {
  std::vector<uint8_t> shm;
  std::vector<uint8_t> network;
};

std::vector<uint8_t> combine(const Parts& parts) {
  std::vector<uint8_t> blob;
  blob.reserve(1 + sizeof(uint32_t) + parts.shm.size() + parts.network.size());
  blob.push_back(kBlobVersion);
  const auto length = static_cast<uint32_t>(parts.shm.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(&length);
  blob.insert(blob.end(), bytes, bytes + sizeof length);
  blob.insert(blob.end(), parts.shm.begin(), parts.shm.end());
  blob.insert(blob.end(), parts.network.begin(), parts.network.end());
  return blob;
}

Parts split(const std::vector<uint8_t>& blob, int rank) {
  constexpr size_t kFixed = 1 + sizeof(uint32_t);
  uint32_t length = 0;
  if (blob.size() >= kFixed) std::memcpy(&length, blob.data() + 1, sizeof length);
  if (blob.size() < kFixed || blob[0] != kBlobVersion || blob.size() - kFixed < length) {
    fail(COMM_ERR_TRANSPORT, "transport: rank {}'s address ({} bytes, format {}) is not one this rank understands",
         rank, blob.size(), blob.empty() ? 0 : blob[0]);
  }
  auto shmEnd = blob.begin() + kFixed + length;
  return {{blob.begin() + kFixed, shmEnd}, {shmEnd, blob.end()}};
}

class HybridTransport final : public Transport {
 public:
  explicit HybridTransport(const Options& options);

  std::vector<uint8_t> localAddress() const override {
    return combine({shm_ ? shm_->localAddress() : std::vector<uint8_t>{},
                    network_ ? network_->localAddress() : std::vector<uint8_t>{}});
  }
  void connect(int selfRank, const std::vector<PeerInfo>& peers) override;
  void send(int peer, uint64_t tag, const void* data, size_t size, Request& request) override {
    routeTo(peer).send(peer, tag, data, size, request);
  }
  void recv(int peer, uint64_t tag, void* data, size_t size, Request& request) override {
    routeTo(peer).recv(peer, tag, data, size, request);
  }
  void cancel(Request& request) override {
    // Each leaves alone what is not its own.
    if (shm_) shm_->cancel(request);
    if (network_ && networkUsed_ && !request.done.load(std::memory_order_acquire)) network_->cancel(request);
  }
  bool survivesPeerDeath() const override { return !networkUsed_ || network_->survivesPeerDeath(); }
  bool busy() const override { return networkUsed_ && network_->busy(); }
  // Shared memory arrivals wait for the end of the block, as for a nap.
  bool waitReady(std::chrono::microseconds limit) override { return networkUsed_ && network_->waitReady(limit); }
  bool progress() override {
    bool completed = shm_ && shm_->progress();
    if (networkUsed_) completed = network_->progress() || completed;
    return completed;
  }
  void flush(Deadline deadline) override {
    if (shm_) shm_->flush(deadline);
    if (networkUsed_) network_->flush(deadline);
  }
  std::string providerFor(int peer) const override { return routeTo(peer).providerFor(peer); }
  bool directSharedMemory(int peer) const override { return routeTo(peer).directSharedMemory(peer); }
  bool mayReadMemoryOf(int peer) const override { return routeTo(peer).mayReadMemoryOf(peer); }
  int readMemoryOf(int peer, void* local, uint64_t remote, size_t bytes) const override {
    return routeTo(peer).readMemoryOf(peer, local, remote, bytes);
  }
  bool wantsChunkedMessages(bool sameNode) const override {
    const Transport* route = sameNode && shm_ ? shm_.get() : network_.get();
    return route != nullptr && route->wantsChunkedMessages(sameNode);
  }

 private:
  Transport& routeTo(int peer) const {
    if (peer < 0 || static_cast<size_t>(peer) >= routes_.size()) {
      fail(COMM_ERR_INVALID_ARGUMENT, "transport: no route to rank {} ({} ranks connected)", peer, routes_.size());
    }
    return *routes_[peer];
  }

  std::unique_ptr<Transport> shm_;
  std::unique_ptr<Transport> network_;
  std::vector<Transport*> routes_;
  bool networkUsed_ = false;
};

HybridTransport::HybridTransport(const Options& options) {
  shm_ = createFor(Reach::kNode, options);
  // On a single node the direct path reaches everyone; a network transport
  // would only open endpoints (and shared memory of its own) that nobody uses.
  if (!shm_ || !options.singleNode) network_ = createFor(Reach::kNetwork, options);
}

void HybridTransport::connect(int selfRank, const std::vector<PeerInfo>& peers) {
  if (!routes_.empty()) fail(COMM_ERR_INVALID_USAGE, "transport: connect called twice");
  std::vector<PeerInfo> direct(peers.size());
  std::vector<PeerInfo> network(peers.size());
  std::vector<int> directRanks;
  std::vector<int> networkRanks;
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    Parts parts = split(peers[rank].address, static_cast<int>(rank));
    const bool isDirect = shm_ && peers[rank].sameNode && !parts.shm.empty();
    (isDirect ? directRanks : networkRanks).push_back(static_cast<int>(rank));
    if (!isDirect && (!network_ || parts.network.empty())) {
      fail(COMM_ERR_TRANSPORT,
           "transport: no way to reach rank {}: {} over shared memory and {} over the network (do COMM_SHM and "
           "COMM_PROVIDER agree on all ranks?)",
           rank, peers[rank].sameNode ? "it offers nothing" : "it is on another node",
           network_ ? "it offers nothing" : "this rank opened nothing");
    }
    direct[rank] = {std::move(parts.shm), isDirect};
    network[rank] = {std::move(parts.network), peers[rank].sameNode};
  }
  if (shm_) shm_->connect(selfRank, direct);
  networkUsed_ = !networkRanks.empty();
  if (networkUsed_) network_->connect(selfRank, network);
  routes_.resize(peers.size());
  for (int rank : directRanks) routes_[rank] = shm_.get();
  for (int rank : networkRanks) routes_[rank] = network_.get();
  if (!directRanks.empty()) log::info("transport: ranks {} over {}", fmt::join(directRanks, ","), kShmDirectProvider);
  if (networkUsed_)
    log::info("transport: ranks {} over {}", fmt::join(networkRanks, ","), network_->providerFor(networkRanks[0]));
}

}  // namespace

std::vector<std::string> availableProviders() {
  std::vector<std::string> names{kTcpProvider};
  for (std::string& name : usableOfiProviders()) {
    // The setting's "tcp" is comm's own; libfabric's tcp is not reachable by that name.
    if (name != kTcpProvider) names.push_back(std::move(name));
  }
  return names;
}

std::vector<TransportRow> transportRows() {
  std::vector<TransportRow> rows;
  for (const Row& row : kTransports) rows.push_back({row.name, row.ranksAreThreads});
  return rows;
}

std::unique_ptr<Transport> createTransportOfRow(std::string_view name, const Options& options) {
  for (const Row& row : kTransports) {
    if (row.name == name) return row.create(options);
  }
  fail(COMM_ERR_INVALID_ARGUMENT, "transport: no transport named '{}' in the table", name);
}

std::unique_ptr<Transport> createNetworkTransport(const Options& options) {
  return createFor(Reach::kNetwork, options);
}

std::unique_ptr<Transport> createTransport(const Options& options) {
  return std::make_unique<HybridTransport>(options);
}

}  // namespace comm::transport
