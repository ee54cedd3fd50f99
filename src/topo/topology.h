// What this node is made of, as hwloc sees it: NUMA domains, sockets,
// cores, and the NICs and GPUs with the NUMA domain each is attached to,
// for placing ranks and choosing the NIC and GPU near each.
#pragma once

#include <string>
#include <vector>

namespace comm::topo {

struct Device {
  std::string name;    // the OS's: eth0, mlx5_0, cuda0, or the PCI address where the OS device is unknown
  std::string kind;    // "network", "openfabrics", "gpu" ...
  std::string pciBus;  // 0000:3b:00.0, empty when not on PCI
  int numa = -1;       // the nearest NUMA domain's OS index; -1 when hwloc cannot tell
};

struct Topology {
  int numaDomains = 0;
  int sockets = 0;
  int cores = 0;
  int hardwareThreads = 0;
  std::vector<Device> nics;
  std::vector<Device> gpus;
};

// This node's topology; throws comm::Error (COMM_ERR_INTERNAL) when hwloc fails.
Topology discover();

// Where this process runs: the NUMA domain and the socket (package) that
// hold every CPU it is bound to, by their OS indexes; -1 where its CPUs
// span several (an unbound process on a machine of several sockets).
struct Placement {
  int numa = -1;
  int socket = -1;
};
// Throws comm::Error (COMM_ERR_INTERNAL) when hwloc fails.
Placement placeOfThisProcess();

// Lines for people (comm-info --topology).
std::string describe(const Topology& topology);

}  // namespace comm::topo
