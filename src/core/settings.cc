#include "core/settings.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/error.h"

namespace comm {
namespace {

constexpr SettingSpec kSpecs[] = {
    {"rank", "", "this process's world rank (set by commrun; other launchers' variables are read too)"},
    {"world_size", "", "number of ranks in the world"},
    {"local_rank", "", "rank among the ranks on this node"},
    {"local_world_size", "", "number of ranks on this node"},
    {"master_addr", "", "host of the rendezvous store (under srun, default: the step's first host)"},
    {"master_port", "", "port of the rendezvous store (under srun, default: 15000 + SLURM_JOB_ID % 15000)"},
    {"job_secret", "",
     "the secret every process of the job proves on each connection (commrun sets it; at least 16 characters)", true},
    {"job_secret_file", "",
     "a file (mode 0600) holding the job secret, for launchers that cannot set job_secret; the rank that hosts the "
     "store creates it when missing"},
    {"join", "0",
     "1: comm_init joins a running job as a new rank, taking the next seat that the job's ranks offer with comm_grow "
     "(commrun --replace sets it for the ranks it starts in place of failed ones); 0: an ordinary member of the "
     "launch"},
    {"timeout", "600", "seconds any wait may take before it fails with COMM_ERR_TIMEOUT"},
    {"provider", "",
     "transport to the peers the direct shared-memory path does not serve (other nodes; every peer when shm is 0): "
     "tcp (comm's own TCP transport) or a libfabric provider (tcp;ofi_rxm, verbs;ofi_rxm, shm...); empty: "
     "tcp for a job across nodes, else (or when FI_PROVIDER is set) libfabric's choice"},
    {"shm", "1",
     "direct shared-memory path between ranks on one node: 1 on (large messages streamed through shared memory, or "
     "read by cross-memory attach when the node's ranks may together run on fewer CPUs than there are of them), attach "
     "(always read by cross-memory attach), copy (always streamed, and no algorithm reads or writes another rank's "
     "buffers in place), 0 off (peers on the node go through the provider too)"},
    {"cuda_ipc", "1",
     "ranks whose device buffers are on one GPU reduce large all_reduce calls on it, mapping each other's device "
     "memory through CUDA IPC: 1 on, 0 off (they stage through host memory; for containers without a shared IPC "
     "namespace)"},
    {"tcp_iface", "",
     "network interface for tcp (comm's own and libfabric's) between nodes; empty: the one that reaches the master "
     "address, else the first that is not loopback or a docker/virtual bridge (docker*, br-*, virbr*, veth*...)"},
    {"tcp_unexpected_bytes", "268435456",
     "bytes of messages that arrived before their receive held for one peer, over comm's tcp and the direct "
     "shared-memory path; past it the peer's further messages stay unread and its sends wait until receives take "
     "some (back-pressure)"},
    {"test_ranks_per_node", "0",
     "testing: number the ranks' nodes as if every node held this many ranks (world ranks 0..n-1 on node 0, and so "
     "on), so that comm_node_count, comm_split_by_node and the hierarchical algorithms act across nodes on one host; "
     "messages still take the real node's paths; 0: off"},
    {"test_communicator_ids", "0",
     "testing: give communicators only ids 1..n (all ranks must agree), so that a test sees ids come back after a few "
     "hundred communicators instead of 65535; 0: all 65535"},
    {"log_level", "warn", "error, warn, info, debug or trace"},
    {"log_file", "", "log destination (default stderr); %r becomes the rank"},
    {"algo", "", "algorithm overrides, e.g. all_reduce:ring,broadcast:binomial"},
    {"debug_dir", "",
     "folder where each rank writes a communicator's flight record (flight.<communicator>.rank<r>.json) on a "
     "timeout or a peer's failure; comm-info --hang-report merges them"},
};

}  // namespace

std::span<const SettingSpec> settingSpecs() { return kSpecs; }

bool isSettingKey(std::string_view key) {
  return std::any_of(std::begin(kSpecs), std::end(kSpecs), [&](const SettingSpec& s) { return key == s.key; });
}

std::string environmentName(std::string_view key) {
  std::string name = "COMM_";
  for (char c : key) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

Settings Settings::load(const std::map<std::string, std::string>& explicitValues) {
  Settings settings;
  for (const SettingSpec& spec : kSpecs) {
    if (auto it = explicitValues.find(spec.key); it != explicitValues.end()) {
      settings.entries_[spec.key] = {it->second, "set by config"};
    } else if (const char* env = std::getenv(environmentName(spec.key).c_str())) {
      settings.entries_[spec.key] = {env, "set by environment (" + environmentName(spec.key) + ")"};
    }
  }
  return settings;
}

std::optional<std::string> Settings::find(std::string_view key) const {
  if (auto it = entries_.find(key); it != entries_.end()) return it->second.value;
  return std::nullopt;
}

std::string Settings::get(std::string_view key) const {
  if (auto value = find(key)) return *value;
  for (const SettingSpec& spec : kSpecs) {
    if (key == spec.key) return spec.defaultValue;
  }
  fail(COMM_ERR_INTERNAL, "setting '{}' is not declared", key);
}

int64_t Settings::getInt(std::string_view key) const {
  std::string text = get(key);
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{}='{}' is not an integer", environmentName(key), text);
  }
  return value;
}

bool Settings::getSwitch(std::string_view key) const {
  std::string text = get(key);
  if (text != "1" && text != "0") fail(COMM_ERR_INVALID_ARGUMENT, "{}='{}' is not 1 or 0", environmentName(key), text);
  return text == "1";
}

std::string Settings::source(std::string_view key) const {
  if (auto it = entries_.find(key); it != entries_.end()) return it->second.source;
  return "default";
}

}  // namespace comm
