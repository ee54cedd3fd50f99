// Everything a process shares among its communicators: launch facts, the
// rendezvous store, the transport, what is known about each peer, the abort
// flag and the background progress thread.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/store.h"
#include "common/deadline.h"
#include "core/communicator_ids.h"
#include "core/grow_seats.h"
#include "core/progress_thread.h"
#include "core/settings.h"
#include "core/signature.h"
#include "topo/topology.h"
#include "transport/transport.h"

namespace comm::core {

struct PeerRecord {
  std::string node;  // identifies the node (host, boot and pid namespace)
  std::string host;
  pid_t pid = 0;
  topo::Placement placement;  // its NUMA domain and socket on its node
  bool sameNode = false;
  int nodeIndex = 0;  // nodes numbered by their lowest world rank (World::nodeCount)
  int hostIndex = 0;  // likewise, the real nodes: never cut by COMM_TEST_RANKS_PER_NODE
  // The number under which commrun records its end (LaunchInfo::launchSlot):
  // its world rank, except in a world grown by comm_grow.
  int launchSlot = 0;
};

// Per collective kind, the algorithm COMM_ALGO forces ("" for none), as
// algo/selection/overrides.h parsed and checked it; the world only keeps it.
using AlgorithmOverrides = std::array<std::string, kCollectiveKinds>;

class World {
 public:
  // Join the world described by the launcher environment and `settings`:
  // the process's one world (comm_init's), so a second while one lives fails.
  static std::shared_ptr<World> create(const Settings& settings, AlgorithmOverrides overrides = {});
  // One rank of a world whose ranks are threads of this process, a call per
  // thread (tests/unit/ranks_as_threads.h): `settings` name the rank, the
  // size and the store. It claims nothing of the process: not its one world
  // (so comm_init's contract stands), not the numbering of its worlds' store
  // keys, not the log's rank or file.
  static std::shared_ptr<World> createThreadRank(const Settings& settings, AlgorithmOverrides overrides = {});
  // This rank's part of the world that comm_grow makes of a communicator
  // of `from` and the newcomers (core/grow_seats.h): `from`'s settings,
  // store and secret, new peers and a transport of its own.
  static std::shared_ptr<World> createGrown(const World& from, const Seat& seat);
  ~World();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  // Nodes the world spans; COMM_TEST_RANKS_PER_NODE may cut one host into
  // several (PeerRecord::nodeIndex).
  int nodeCount() const { return nodeCount_; }
  const PeerRecord& peer(int worldRank) const { return peers_[worldRank]; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // COMM_CUDA_IPC: ranks sharing a GPU may map each other's device memory.
  bool cudaIpc() const { return cudaIpc_; }
  const Settings& settings() const { return settings_; }
  // The algorithm COMM_ALGO names for `kind`, or "". Inline: every collective asks.
  const std::string& algorithmOverride(CollectiveKind kind) const {
    return algorithmOverrides_[static_cast<size_t>(kind)];
  }
  transport::Transport& transport() { return *transport_; }
  // Whether the world has the rendezvous store: a world of one rank
  // launched alone has none; one left by a shrink or made by a grow keeps
  // the job's.
  bool hasStore() const { return store_ != nullptr; }
  ProgressThread& progressThread() { return *progress_; }

  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(std::memory_order_relaxed); }

  // Why `worldRank` can no longer take part, if it is known to be gone: a
  // peer on this node whose process has exited, or a rank commrun reported.
  // Before it says so it takes in everything the transport holds: ranks
  // leave their last collective at different times, and one that has
  // exited may have sent what the caller waits for before it went, so a
  // caller looks at what it waits for again before calling it a failure.
  std::optional<std::string> peerFailure(int worldRank);

  // The first failure of a rank that this rank knows of: its world rank and
  // what happened, naming its pid and host ("rank 2 (pid 4711 on node3) was
  // killed by signal 9 (Killed)"), seen here or reported by another rank.
  struct Failure {
    int worldRank;
    std::string what;
  };
  std::optional<Failure> firstFailure() const;
  // Every failure this rank knows of, by world rank: each rank noteFailure
  // was told of, in world rank order.
  std::map<int, std::string> knownFailures() const;
  // What proves `worldRank` gone, looking now rather than at the pace of
  // peerFailure: a failure known here, its exit seen on this node, or
  // commrun's record of its end. Used where ranks wait for each other
  // through the store (core/agreement.h), so only a death counts: not a
  // timeout, which a slow rank may cause.
  std::optional<std::string> failureEvidence(int worldRank);
  // Notes that `worldRank` failed (`what`), among knownFailures, and as
  // the first failure unless one is known already. Under commrun, the
  // failure commrun recorded for the job comes first there: a rank seen gone here may only have followed it (it is
  // waited for briefly, as commrun records a rank's end within milliseconds).
  void noteFailure(int worldRank, const std::string& what);
  // "rank 2 (pid 4711 on node3)"
  std::string describePeer(int worldRank) const;
  // `message`, with the first failure known appended unless it names it.
  std::string blame(std::string message) const;

  // A communicator id no other live communicator of this job uses
  // (communicator_ids.h).
  uint16_t allocateCommunicatorId();
  // One of the `members` members of communicator `id` is done with it (its
  // destructor); never throws: a failure only keeps the id from coming back.
  // `count` of them at once: a shrink counts the dead members, who never will.
  void releaseCommunicatorId(uint16_t id, int members, int count = 1) noexcept;

  // Rendezvous through the store: publish this rank's value under `key` and
  // read every rank's in `ranks` (world ranks). Single-rank worlds need no store.
  void storeSet(const std::string& key, const std::string& value);
  std::string storeGet(const std::string& key);
  // storeGet of a key that world rank `writer` sets: fails with
  // COMM_ERR_REMOTE as soon as `writer` is known to be gone (`what` says
  // what it would have written) instead of waiting out the timeout.
  std::string storeGetFrom(const std::string& key, int writer, std::string_view what);
  // The value of `key` if it is there now, without waiting.
  std::optional<std::string> storeCheck(const std::string& key);
  // Sets `key` to `value` unless it exists; returns the value it then has.
  std::string storeSetIfAbsent(const std::string& key, const std::string& value);
  void storeErasePrefix(const std::string& prefix);
  // The same for keys every world of the job shares, outside this world's
  // own (those through which comm_grow meets newcomers).
  int64_t jobStoreAdd(const std::string& key, int64_t delta);
  // Waits in the store, not polling it, so only while nothing else of this
  // world needs the store (a newcomer joining).
  std::string jobStoreGet(const std::string& key);
  void jobStoreSet(const std::string& key, const std::string& value);
  std::optional<std::string> jobStoreCheck(const std::string& key);

 private:
  World() = default;
  // Everything of create() but what belongs to the process.
  void join(const Settings& settings, AlgorithmOverrides overrides);
  // What join and createGrown share once the store is there: the peers,
  // the transport, the progress thread. `occupants`: every rank's seat in
  // a grown world, empty in a launched one.
  void meet(const std::vector<Occupant>& occupants);
  void makeCommunicatorIds();
  void meetPeers(const std::vector<Occupant>& occupants);
  // The store's value of `key` for a world's peer `rank`: waited for, and in
  // a grown world given up as soon as `rank` is known to be gone.
  std::string peerValue(const std::string& key, int rank, bool grown, std::string_view what);
  void numberNodes();
  // `grown`: as peerValue's.
  void connectTransport(bool grown);
  // Counts this rank in the store as done joining, whether it joined or
  // failed: it reads no more of the others' entries.
  void countJoined();
  // Until every rank is done joining (that count), a failure is known, or
  // the timeout: the store's host keeps it for the ranks still reading.
  void awaitJoined();
  void logSettings() const;
  Deadline storeDeadline() const;

  // That `worldRank`, a peer on this node, has exited (noted as its failure).
  std::optional<std::string> exitSeenOnThisNode(int worldRank);
  // peerFailure without taking in what the transport holds.
  std::optional<std::string> reportedPeerFailure(int worldRank);
  // The world rank whose launch slot is `slot`, or -1.
  int worldRankOfSlot(int slot) const;
  // What commrun recorded as the job's first failure, read from the store
  // at most every kFailureCheckInterval unless `now`; nullopt under other
  // launchers, or while another thread uses the store.
  std::optional<std::string> launcherFailure(bool now);
  // Whether commrun runs with --keep-going (a failure is that rank's alone).
  bool launcherKeepsGoing();
  // What commrun recorded of `worldRank`'s end under --keep-going, read
  // from the store at most every kFailureCheckInterval unless `now`.
  std::optional<std::string> launcherRankFailure(int worldRank, bool now);

  Settings settings_;
  bool cudaIpc_ = true;
  std::array<std::string, kCollectiveKinds> algorithmOverrides_;  // indexed by CollectiveKind
  int rank_ = 0;
  int size_ = 1;
  int localRank_ = 0;
  int localSize_ = 1;
  int nodeCount_ = 1;
  std::string launcher_;
  std::string masterAddr_;          // the store's host, which tcp between nodes prefers to face
  uint16_t masterPort_ = 0;         // the store's port
  int launchSlot_ = 0;              // this process's (LaunchInfo::launchSlot)
  std::string secret_;              // the job's (job_secret.h); empty in a world of one
  std::string secretFileToRemove_;  // the launcher's default secret file, made by this rank
  std::string keyPrefix_;           // of every store key of this world: "" for a process's first, then "world2/"...
  bool ownsProcessWorld_ = false;
  std::chrono::milliseconds timeout_{600000};
  std::optional<Deadline> initDeadline_;
  bool joined_ = false;  // join() returned
  std::unique_ptr<bootstrap::StoreServer> storeServer_;
  std::unique_ptr<bootstrap::StoreClient> store_;
  std::mutex storeMutex_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<ProgressThread> progress_;
  std::vector<PeerRecord> peers_;
  std::atomic<bool> aborted_{false};
  std::unique_ptr<CommunicatorIds> ids_;
  std::map<std::string, int64_t, std::less<>> localCounters_;  // the store of ids_ in a world of one
  Clock::time_point lastFailureCheck_{};
  std::optional<std::string> reportedFailure_;
  mutable std::mutex failureMutex_;
  std::optional<Failure> firstFailure_;                  // guarded by failureMutex_
  std::map<int, std::string> failures_;                  // guarded by failureMutex_: every noted failure
  std::vector<Clock::time_point> lastRankFailureCheck_;  // per world rank; under storeMutex_
  std::atomic<int> keepGoing_{-1};                       // launcherKeepsGoing once asked: 0 or 1; -1 before
};

}  // namespace comm::core
