#include "core_binding.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <memory>
#include <stdexcept>

namespace commrun {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};

}  // namespace

std::vector<cpu_set_t> coreCpuSets() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("--bind-core: hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, TopologyDeleter> topology(raw);
  if (hwloc_topology_load(raw) != 0) throw std::runtime_error("--bind-core: hwloc_topology_load failed");

  // Some virtual machines report no cores, only processing units.
  hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  std::vector<cpu_set_t> sets;
  for (hwloc_obj_t core = nullptr; (core = hwloc_get_next_obj_by_type(raw, type, core)) != nullptr;) {
    cpu_set_t set;
    hwloc_cpuset_to_glibc_sched_affinity(raw, core->cpuset, &set, sizeof(set));
    if (CPU_COUNT(&set) > 0) sets.push_back(set);
  }
  if (sets.empty()) throw std::runtime_error("--bind-core: hwloc found no core to bind to");
  return sets;
}

}  // namespace commrun
