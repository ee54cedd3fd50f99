#include "core/world.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "bootstrap/commrun_keys.h"
#include "bootstrap/job_secret.h"
#include "bootstrap/launch_environment.h"
#include "common/backoff.h"
#include "common/error.h"
#include "common/growing_nap.h"
#include "common/host_name.h"
#include "common/log.h"
#include "common/shm_segment.h"
#include "transport/crash_signals.h"
#include "transport/hybrid_transport.h"
#include "transport/options.h"

namespace comm::core {
namespace {

constexpr auto kFailureCheckInterval = std::chrono::milliseconds(500);
// How long a rank that saw a peer fail waits for commrun's record of the
// job's first failure, and how often it looks.
constexpr auto kLauncherRecordWait = std::chrono::milliseconds(500);
constexpr auto kLauncherRecordPoll = std::chrono::milliseconds(20);
// How many ranks are done joining the world (joined or failed), counted in
// the store.
constexpr const char* kJoinedKey = "joined";
// How often a rank that hosts the store looks whether every rank has joined.
constexpr auto kJoinedPoll = std::chrono::milliseconds(2);

std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Two processes share a node (and so /dev/shm and pids) when host name, boot
// and pid namespace all agree.
std::string nodeIdentity() {
  struct stat ns {};
  unsigned long pidNamespace = stat("/proc/self/ns/pid", &ns) == 0 ? ns.st_ino : 0;
  return fmt::format("{}/{}/{}", hostName(), readFirstLine("/proc/sys/kernel/random/boot_id"), pidNamespace);
}

// This process's NUMA domain and socket; unknown (-1) where hwloc cannot
// tell, which only the topology log and comm-info show.
topo::Placement placement() {
  try {
    return topo::placeOfThisProcess();
  } catch (const Error& error) {
    log::debug("no NUMA domain or socket for this rank: {}", error.what());
    return {};
  }
}

bool isLoopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

// One world per process at a time; worlds made one after another are
// numbered, and the store keys of each after the first carry its number, so
// that a store that outlives a world (commrun's) never answers a later
// world with an earlier one's keys.
std::atomic<bool> aWorldLives{false};
std::atomic<int> worldsMade{0};

}  // namespace

std::shared_ptr<World> World::create(const Settings& settings, AlgorithmOverrides overrides) {
  transport::keepCrashesVisible();
  const bool cudaIpc = settings.getSwitch("cuda_ipc");  // bad input fails whatever the process's state
  if (aWorldLives.exchange(true)) {
    fail(COMM_ERR_INVALID_USAGE,
         "this process's world is still alive (an earlier comm_init's, or a communicator made from it, is not "
         "destroyed); use it, or destroy them all before joining again");
  }
  std::shared_ptr<World> world(new World());
  world->ownsProcessWorld_ = true;
  const int made = ++worldsMade;
  if (made > 1) world->keyPrefix_ = fmt::format("world{}/", made);
  log::configure(settings.get("log_level"), settings.get("log_file"));
  world->cudaIpc_ = cudaIpc;
  world->join(settings, std::move(overrides));
  return world;
}

std::shared_ptr<World> World::createThreadRank(const Settings& settings, AlgorithmOverrides overrides) {
  std::shared_ptr<World> world(new World());
  world->cudaIpc_ = settings.getSwitch("cuda_ipc");
  world->join(settings, std::move(overrides));
  return world;
}

std::shared_ptr<World> World::createGrown(const World& from, const Seat& seat) {
  std::shared_ptr<World> world(new World());
  world->settings_ = from.settings_;
  world->cudaIpc_ = from.cudaIpc_;
  world->algorithmOverrides_ = from.algorithmOverrides_;
  world->timeout_ = from.timeout_;
  world->launcher_ = from.launcher_;
  world->masterAddr_ = from.masterAddr_;
  world->masterPort_ = from.masterPort_;
  world->secret_ = from.secret_;
  world->launchSlot_ = from.launchSlot_;
  world->keyPrefix_ = grownWorldPrefix(seat.epoch);
  world->rank_ = seat.rank;
  world->size_ = static_cast<int>(seat.occupants.size());
  const Deadline deadline(world->timeout_);
  world->initDeadline_ = deadline;
  world->store_ =
      std::make_unique<bootstrap::StoreClient>(world->masterAddr_, world->masterPort_, world->secret_, deadline);
  world->meet(seat.occupants);
  return world;
}

void World::join(const Settings& settings, AlgorithmOverrides overrides) {
  settings_ = settings;

  auto lookup = [&settings](std::string_view name) -> std::optional<std::string> {
    if (name.rfind("COMM_", 0) == 0) {
      std::string key;
      for (char c : name.substr(5)) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (isSettingKey(key)) return settings.find(key);
    }
    if (const char* value = std::getenv(std::string(name).c_str())) return std::string(value);
    return std::nullopt;
  };
  bootstrap::LaunchInfo launch = bootstrap::detectLaunch(lookup);
  rank_ = launch.rank;
  size_ = launch.worldSize;
  launcher_ = launch.launcher;
  masterAddr_ = launch.masterAddr;
  masterPort_ = launch.masterPort;
  launchSlot_ = launch.launchSlot;
  const bool joining = settings.getSwitch("join");
  if (joining && launch.masterAddr.empty()) {
    fail(COMM_ERR_INVALID_ARGUMENT,
         "COMM_JOIN=1 joins a running job, but nothing says where its store is: start this rank as the job's ranks "
         "were (COMM_MASTER_ADDR, COMM_MASTER_PORT and COMM_JOB_SECRET, or commrun --replace)");
  }
  // The log's rank and file are the process's: a thread's rank leaves them.
  if (ownsProcessWorld_) {
    log::setRank(launch.rank);
    if (!settings.get("log_file").empty()) log::configure(settings.get("log_level"), settings.get("log_file"));
  }

  int64_t seconds = settings.getInt("timeout");
  if (seconds <= 0) fail(COMM_ERR_INVALID_ARGUMENT, "COMM_TIMEOUT={} must be a positive number of seconds", seconds);
  timeout_ = std::chrono::seconds(seconds);
  algorithmOverrides_ = std::move(overrides);
  // Init as a whole, not each step, is bounded by the timeout.
  Deadline deadline(timeout_);
  initDeadline_ = deadline;

  if (size_ > 1 || joining) {
    // A newcomer finds the store where the job's ranks have it.
    const bool hostsStore = !launch.storeHostedByLauncher && rank_ == 0 && !joining;
    // A launcher that hands no secret may offer a place for one.
    const bool launcherFile =
        !launch.secretFile.empty() && !lookup("COMM_JOB_SECRET") && !lookup("COMM_JOB_SECRET_FILE");
    auto secretLookup = [&](std::string_view name) -> std::optional<std::string> {
      if (launcherFile && name == "COMM_JOB_SECRET_FILE") return launch.secretFile;
      return lookup(name);
    };
    std::optional<std::string> secret = bootstrap::findJobSecret(secretLookup, hostsStore, deadline);
    // Every rank has read it once the world is up; the job step's file
    // would otherwise stay behind in $HOME.
    if (launcherFile && hostsStore) secretFileToRemove_ = launch.secretFile;
    if (!secret) {
      fail(COMM_ERR_INVALID_ARGUMENT,
           "rank {} of {} (launched by {}) has no job secret: set COMM_JOB_SECRET to the same value on every rank, "
           "or COMM_JOB_SECRET_FILE to a file every rank can read (rank 0 creates it); see docs/security.md",
           rank_, size_, launch.launcher);
    }
    secret_ = std::move(*secret);
    if (hostsStore) {
      // Listen on loopback only when nobody else could reach it anyway.
      std::string bindHost = isLoopback(launch.masterAddr) ? launch.masterAddr : "";
      storeServer_ = std::make_unique<bootstrap::StoreServer>(bindHost, launch.masterPort, secret_);
    }
    store_ = std::make_unique<bootstrap::StoreClient>(launch.masterAddr, launch.masterPort, secret_, deadline);
  }
  if (joining) {
    const Seat seat = awaitSeat(*this, Occupant{launchSlot_, getpid(), hostName(), nodeIdentity()});
    rank_ = seat.rank;
    size_ = static_cast<int>(seat.occupants.size());
    keyPrefix_ = grownWorldPrefix(seat.epoch);
    if (ownsProcessWorld_) log::setRank(rank_);
    meet(seat.occupants);
    awaitGrownWorldSettled(*this, seat.epoch);
    return;
  }
  meet({});
  if (launch.localRank >= 0 && launch.localRank != localRank_) {
    log::warn("the launcher says local rank {}, but {} ranks before this one share its node", launch.localRank,
              localRank_);
  }
}

void World::meet(const std::vector<Occupant>& occupants) {
  makeCommunicatorIds();
  try {
    meetPeers(occupants);
    connectTransport(!occupants.empty());
  } catch (const Error&) {
    countJoined();
    throw;
  }
  countJoined();
  progress_ = std::make_unique<ProgressThread>(*transport_);
  logSettings();
  initDeadline_.reset();
  joined_ = true;
}

void World::countJoined() {
  if (!store_ || size_ == 1) return;
  try {
    std::lock_guard lock(storeMutex_);
    store_->add(keyPrefix_ + kJoinedKey, 1, storeDeadline());
  } catch (const Error& e) {
    log::debug("the store did not count this rank in: {}", e.what());
  }
}

void World::awaitJoined() {
  const Deadline deadline(timeout_);
  try {
    while (store_->add(keyPrefix_ + kJoinedKey, 0, deadline) < size_ && !deadline.expired() && !firstFailure()) {
      std::this_thread::sleep_for(kJoinedPoll);
    }
  } catch (const Error& e) {
    log::debug("closing the store before every rank joined: {}", e.what());
  }
}

World::~World() {
  // An aborted job hands nothing over: its peers are told it is gone.
  try {
    if (transport_) transport_->flush(Deadline(aborted() ? std::chrono::milliseconds(0) : timeout_));
  } catch (const Error& e) {
    log::debug("leaving with messages owed to peers: {}", e.what());
  }
  progress_.reset();
  transport_.reset();
  // A rank that hosts the store may finish first (a scatter's root waits
  // for nobody) while the others still read each other's addresses. If it
  // failed to join itself, the others fail too: nobody is waited for.
  if (storeServer_ && joined_ && size_ > 1 && !aborted()) awaitJoined();
  store_.reset();
  storeServer_.reset();
  if (!secretFileToRemove_.empty()) unlink(secretFileToRemove_.c_str());
  if (ownsProcessWorld_) aWorldLives.store(false);
}

Deadline World::storeDeadline() const {
  // During init every store call shares init's deadline; afterwards each gets the timeout.
  return initDeadline_ ? *initDeadline_ : Deadline(timeout_);
}

void World::storeSet(const std::string& key, const std::string& value) {
  std::lock_guard lock(storeMutex_);
  store_->set(keyPrefix_ + key, value, storeDeadline());
}

std::string World::storeGet(const std::string& key) {
  std::lock_guard lock(storeMutex_);
  return store_->get(keyPrefix_ + key, storeDeadline());
}

std::string World::storeGetFrom(const std::string& key, int writer, std::string_view what) {
  const Deadline deadline = storeDeadline();
  GrowingNap nap;
  for (;;) {
    if (std::optional<std::string> value = storeCheck(key)) return *value;
    if (std::optional<std::string> failure = failureEvidence(writer)) {
      fail(COMM_ERR_REMOTE, "{} never came: {}", what, *failure);
    }
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "{} did not come from {} within {} ms (store key {})", what, describePeer(writer),
           timeout_.count(), key);
    }
    nap.take();
  }
}

int64_t World::jobStoreAdd(const std::string& key, int64_t delta) {
  std::lock_guard lock(storeMutex_);
  return store_->add(key, delta, storeDeadline());
}

std::string World::jobStoreGet(const std::string& key) {
  std::lock_guard lock(storeMutex_);
  return store_->get(key, storeDeadline());
}

void World::jobStoreSet(const std::string& key, const std::string& value) {
  std::lock_guard lock(storeMutex_);
  store_->set(key, value, storeDeadline());
}

std::optional<std::string> World::jobStoreCheck(const std::string& key) {
  std::lock_guard lock(storeMutex_);
  return store_->check(key, storeDeadline());
}

std::optional<std::string> World::storeCheck(const std::string& key) {
  std::lock_guard lock(storeMutex_);
  return store_->check(keyPrefix_ + key, storeDeadline());
}

std::string World::storeSetIfAbsent(const std::string& key, const std::string& value) {
  std::lock_guard lock(storeMutex_);
  return store_->setIfAbsent(keyPrefix_ + key, value, storeDeadline());
}

void World::storeErasePrefix(const std::string& prefix) {
  std::lock_guard lock(storeMutex_);
  store_->erasePrefix(keyPrefix_ + prefix, storeDeadline());
}

std::string World::peerValue(const std::string& key, int rank, bool grown, std::string_view what) {
  return grown ? storeGetFrom(key, rank, fmt::format("rank {}'s {}", rank, what)) : storeGet(key);
}

void World::meetPeers(const std::vector<Occupant>& occupants) {
  PeerRecord self{nodeIdentity(), hostName(), getpid(), placement(), true};
  self.launchSlot = launchSlot_;
  peers_.assign(size_, {});
  // In a grown world what the seats say of each rank comes first, so that
  // one that dies before it says more is seen dead (failureEvidence).
  for (int r = 0; r < size_; ++r) {
    PeerRecord& peer = peers_[r];
    peer.launchSlot = r;
    if (occupants.empty()) continue;
    peer.launchSlot = occupants[r].launchSlot;
    peer.pid = occupants[r].pid;
    peer.host = occupants[r].host;
    peer.node = occupants[r].node;
    peer.sameNode = peer.node == self.node;
  }
  if (size_ > 1) {
    storeSet(fmt::format("peer/{}", rank_), fmt::format("{}\n{}\n{} {} {}", self.node, self.host, self.pid,
                                                        self.placement.numa, self.placement.socket));
    for (int r = 0; r < size_; ++r) {
      std::istringstream in(peerValue(fmt::format("peer/{}", r), r, !occupants.empty(), "peer record"));
      PeerRecord& peer = peers_[r];
      std::getline(in, peer.node);
      std::getline(in, peer.host);
      in >> peer.pid >> peer.placement.numa >> peer.placement.socket;
    }
  } else {
    peers_[0] = self;
  }
  localRank_ = 0;
  localSize_ = 0;
  for (int r = 0; r < size_; ++r) {
    peers_[r].sameNode = peers_[r].node == self.node;
    if (peers_[r].sameNode) {
      if (r < rank_) ++localRank_;
      ++localSize_;
    }
  }
  numberNodes();
  const bool enoughCores = static_cast<unsigned>(localSize_) <= std::thread::hardware_concurrency();
  coreForEachRank.store(enoughCores, std::memory_order_relaxed);
}

void World::numberNodes() {
  // Only the numbering is faked: the transport still sees the real node, so
  // tests on one host run the algorithms across "nodes" over shared memory.
  const int64_t fakeNodeSize = settings_.getInt("test_ranks_per_node");
  if (fakeNodeSize < 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_TEST_RANKS_PER_NODE={} must be 0 (off) or a number of ranks", fakeNodeSize);
  }
  std::map<std::string, int> indexOf;
  std::map<std::string, int> hostIndexOf;
  for (int r = 0; r < size_; ++r) {
    std::string node = peers_[r].node;
    peers_[r].hostIndex = hostIndexOf.emplace(node, static_cast<int>(hostIndexOf.size())).first->second;
    if (fakeNodeSize > 0) node += fmt::format("/test-node-{}", r / fakeNodeSize);
    peers_[r].nodeIndex = indexOf.emplace(node, static_cast<int>(indexOf.size())).first->second;
  }
  nodeCount_ = static_cast<int>(indexOf.size());
}

void World::connectTransport(bool grown) {
  transport::Options options;
  options.provider = settings_.get("provider");
  options.singleNode = localSize_ == size_;
  options.tcpInterface = settings_.get("tcp_iface");
  options.masterAddr = masterAddr_;
  options.secret = secret_;
  const int64_t unexpected = settings_.getInt("tcp_unexpected_bytes");
  if (unexpected <= 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_TCP_UNEXPECTED_BYTES={} must be a positive number of bytes", unexpected);
  }
  options.tcp.maxUnexpectedBytes = static_cast<size_t>(unexpected);
  options.tcp.connectTimeout = initDeadline_->remaining();
  options.shm = {transport::parseShmMode(settings_.get("shm")), initDeadline_->remaining()};
  options.shm.maxUnexpectedBytes = options.tcp.maxUnexpectedBytes;
  transport_ = transport::createTransport(options);
  std::vector<transport::PeerInfo> infos(size_);
  std::vector<uint8_t> self = transport_->localAddress();
  if (size_ > 1) {
    storeSet(fmt::format("addr/{}", rank_), std::string(self.begin(), self.end()));
    for (int r = 0; r < size_; ++r) {
      std::string blob = peerValue(fmt::format("addr/{}", r), r, grown, "address");
      infos[r].address.assign(blob.begin(), blob.end());
      infos[r].sameNode = peers_[r].sameNode;
    }
  } else {
    infos[0] = {self, true};
  }
  transport_->connect(rank_, infos);
}

void World::logSettings() const {
  if (!log::enabled(log::Level::kInfo)) return;
  log::info("world of {} ranks on {} nodes ({} on this node, local rank {}), launched by {}", size_, nodeCount_,
            localSize_, localRank_, launcher_);
  for (const SettingSpec& spec : settingSpecs()) {
    if (settings_.source(spec.key) == "default") continue;
    // The log may be read by others; a secret must not be in it.
    log::info("{} {} to '{}'", environmentName(spec.key), settings_.source(spec.key),
              spec.secret ? "(not shown)" : settings_.get(spec.key));
  }
  for (int r = 0; r < size_; ++r) {
    if (r != rank_)
      log::info("rank {} ({}, pid {}) over {}", r, peers_[r].host, peers_[r].pid, transport_->providerFor(r));
  }
}

std::optional<std::string> World::peerFailure(int worldRank) {
  std::optional<std::string> failure = reportedPeerFailure(worldRank);
  if (failure && transport_) {
    while (transport_->progress()) {
    }
  }
  return failure;
}

std::optional<std::string> World::exitSeenOnThisNode(int worldRank) {
  const PeerRecord& peer = peers_[worldRank];
  if (!peer.sameNode || peer.pid <= 0 || kill(peer.pid, 0) == 0 || errno != ESRCH) return std::nullopt;
  const std::string what = fmt::format("{} has exited", describePeer(worldRank));
  noteFailure(worldRank, what);
  return what;
}

std::optional<std::string> World::reportedPeerFailure(int worldRank) {
  if (std::optional<std::string> exited = exitSeenOnThisNode(worldRank)) return exited;
  std::optional<std::string> reported = launcherFailure(false);
  if (!reported) return std::nullopt;
  // commrun ends every rank after the first failure, so any peer awaited is
  // as good as gone; with --keep-going the failure is only the rank it names.
  if (launcherKeepsGoing()) {
    reported = launcherRankFailure(worldRank, false);
    if (!reported) return std::nullopt;
  }
  noteFailure(worldRank, *reported);
  return reported;
}

std::optional<std::string> World::failureEvidence(int worldRank) {
  {
    std::lock_guard lock(failureMutex_);
    auto known = failures_.find(worldRank);
    if (known != failures_.end()) return known->second;
  }
  if (std::optional<std::string> exited = exitSeenOnThisNode(worldRank)) return exited;
  if (launcher_ != "commrun" || !store_) return std::nullopt;
  std::optional<std::string> reported =
      launcherKeepsGoing() ? launcherRankFailure(worldRank, true) : launcherFailure(true);
  if (reported) noteFailure(worldRank, *reported);
  return reported;
}

std::optional<std::string> World::launcherRankFailure(int worldRank, bool now) {
  std::unique_lock lock(storeMutex_, std::try_to_lock);
  if (!lock.owns_lock() && !now) return std::nullopt;
  if (!lock.owns_lock()) lock.lock();
  if (lastRankFailureCheck_.empty()) lastRankFailureCheck_.assign(size_, Clock::time_point{});
  const auto time = Clock::now();
  if (!now && time - lastRankFailureCheck_[worldRank] < kFailureCheckInterval) return std::nullopt;
  lastRankFailureCheck_[worldRank] = time;
  try {
    return store_->check(bootstrap::commrun_keys::rankFailed(peers_[worldRank].launchSlot),
                         Deadline(std::chrono::seconds(2)));
  } catch (const Error&) {
    return std::nullopt;  // the store is gone with commrun: nothing more to learn from it
  }
}

bool World::launcherKeepsGoing() {
  if (keepGoing_.load() < 0) {
    std::lock_guard lock(storeMutex_);
    try {
      keepGoing_.store(store_->check(bootstrap::commrun_keys::kKeepGoing, Deadline(std::chrono::seconds(2))) ? 1 : 0);
    } catch (const Error&) {
      return false;  // the store is gone with commrun: as without --keep-going
    }
  }
  return keepGoing_.load() == 1;
}

std::optional<std::string> World::launcherFailure(bool now) {
  if (!store_ || launcher_ != "commrun") return std::nullopt;
  std::unique_lock lock(storeMutex_, std::try_to_lock);
  if (!lock.owns_lock()) return reportedFailure_;
  const auto time = Clock::now();
  if (!reportedFailure_ && (now || time - lastFailureCheck_ >= kFailureCheckInterval)) {
    lastFailureCheck_ = time;
    try {
      reportedFailure_ = store_->check(bootstrap::commrun_keys::kFailed, Deadline(std::chrono::seconds(2)));
    } catch (const Error&) {
      // The store is gone with commrun: nothing more to learn from it.
    }
  }
  return reportedFailure_;
}

std::optional<World::Failure> World::firstFailure() const {
  std::lock_guard lock(failureMutex_);
  return firstFailure_;
}

void World::noteFailure(int worldRank, const std::string& what) {
  // A peer on this node that died between creating a shared-memory segment
  // and unlinking it leaves the name: it goes now, whatever launched the
  // job (commrun also sweeps once the job is over).
  const PeerRecord& peer = peers_[worldRank];
  if (peer.sameNode && peer.pid > 0) sweepAbandonedSegments(std::span(&peer.pid, 1));
  {
    std::lock_guard lock(failureMutex_);
    failures_.emplace(worldRank, what);
  }
  if (firstFailure()) return;
  // commrun writes "rank N (pid P on HOST) what happened", and for a rank it
  // started as a replacement "rank N (launch slot S, pid P on HOST) ..."
  // (tools/commrun/supervisor.cc).
  auto recorded = [&]() -> std::optional<Failure> {
    std::optional<std::string> text = launcherFailure(true);
    int slot = -1;
    if (!text || std::sscanf(text->c_str(), "rank %d ", &slot) != 1) return std::nullopt;
    std::sscanf(text->c_str(), "rank %*d (launch slot %d,", &slot);
    const int rank = worldRankOfSlot(slot);
    if (rank < 0) return std::nullopt;
    return Failure{rank, *text};
  };
  std::optional<Failure> failure = recorded();
  // A rank's end reaches commrun and this rank at about the same time.
  for (const Deadline wait(kLauncherRecordWait); !failure && store_ && launcher_ == "commrun" && !wait.expired();) {
    std::this_thread::sleep_for(kLauncherRecordPoll);
    failure = recorded();
  }
  std::lock_guard lock(failureMutex_);
  if (!firstFailure_) firstFailure_ = failure ? *failure : Failure{worldRank, what};
}

int World::worldRankOfSlot(int slot) const {
  for (int r = 0; r < size_; ++r) {
    if (peers_[r].launchSlot == slot) return r;
  }
  return -1;
}

std::map<int, std::string> World::knownFailures() const {
  std::lock_guard lock(failureMutex_);
  return failures_;
}

std::string World::describePeer(int worldRank) const {
  const PeerRecord& peer = peers_[worldRank];
  return fmt::format("rank {} (pid {} on {})", worldRank, peer.pid, peer.host);
}

std::string World::blame(std::string message) const {
  const std::optional<Failure> first = firstFailure();
  if (first && message.find(first->what) == std::string::npos) {
    message += fmt::format("; the first failure this rank knows of: {}", first->what);
  }
  return message;
}

uint16_t World::allocateCommunicatorId() {
  std::lock_guard lock(storeMutex_);
  return ids_->allocate();
}

void World::releaseCommunicatorId(uint16_t id, int members, int count) noexcept {
  try {
    std::lock_guard lock(storeMutex_);
    ids_->release(id, members, count);
  } catch (const std::exception& error) {
    log::warn("communicator {} was destroyed, but its id stays taken: {}", id, error.what());
  }
}

void World::makeCommunicatorIds() {
  CommunicatorIds::Store store;
  if (store_) {
    // Called with storeMutex_ held.
    store.add = [this](const std::string& key, int64_t delta) {
      return store_->add(keyPrefix_ + key, delta, Deadline(timeout_));
    };
    store.erasePrefix = [this](const std::string& prefix) {
      store_->erasePrefix(keyPrefix_ + prefix, Deadline(timeout_));
    };
  } else {
    store.add = [this](const std::string& key, int64_t delta) { return localCounters_[key] += delta; };
    store.erasePrefix = [this](const std::string& prefix) {
      auto entry = localCounters_.lower_bound(prefix);
      while (entry != localCounters_.end() && entry->first.starts_with(prefix)) entry = localCounters_.erase(entry);
    };
  }
  const int64_t ids = settings_.getInt("test_communicator_ids");
  if (ids < 0 || ids > CommunicatorIds::kIds) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_TEST_COMMUNICATOR_IDS={} must be 0 (all) or a number of ids up to {}", ids,
         CommunicatorIds::kIds);
  }
  ids_ = std::make_unique<CommunicatorIds>(std::move(store),
                                           ids == 0 ? CommunicatorIds::kIds : static_cast<uint32_t>(ids));
}

}  // namespace comm::core
