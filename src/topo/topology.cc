#include "topo/topology.h"

#include <hwloc.h>

#include <memory>

#include "common/error.h"

namespace comm::topo {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

int countOf(hwloc_topology_t topology, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topology, type);
  return n < 0 ? 0 : n;
}

// The NUMA domain nearest to an I/O object: the first of its first non-I/O ancestor's.
int numaOf(hwloc_topology_t topology, hwloc_obj_t io) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, io);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  return hwloc_bitmap_first(ancestor->nodeset);
}

std::string pciBusOf(hwloc_obj_t obj) {
  for (; obj != nullptr; obj = obj->parent) {
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      const auto& pci = obj->attr->pcidev;
      return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
    }
  }
  return "";
}

std::unique_ptr<hwloc_topology, TopologyDeleter> load(bool withDevices) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) fail(COMM_ERR_INTERNAL, "hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, TopologyDeleter> topology(raw);
  if (withDevices) {
    // NICs and GPUs are I/O objects, which hwloc leaves out unless asked.
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  } else {
    // Every rank loads it at comm_init: caches are not needed, and skipping them is most of the work.
    hwloc_topology_set_cache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  }
  if (hwloc_topology_load(raw) != 0) fail(COMM_ERR_INTERNAL, "hwloc could not read this node's topology");
  return topology;
}

// The OS index of the one object of `type` whose CPUs include all of `cpus`, or -1.
int holderOf(hwloc_topology_t topology, hwloc_obj_type_t type, hwloc_const_cpuset_t cpus) {
  int found = -1;
  for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology, type, nullptr); obj != nullptr;
       obj = hwloc_get_next_obj_by_type(topology, type, obj)) {
    if (obj->cpuset == nullptr || !hwloc_bitmap_isincluded(cpus, obj->cpuset)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(obj->os_index);
  }
  return found;
}

bool isNvidiaDisplay(hwloc_obj_t pci) {
  // Class 0x03xx: display controllers (0x0300 VGA, 0x0302 3D), the compute GPUs among them.
  return pci->attr->pcidev.vendor_id == 0x10de && (pci->attr->pcidev.class_id >> 8) == 0x03;
}

}  // namespace

Topology discover() {
  std::unique_ptr<hwloc_topology, TopologyDeleter> topology = load(true);
  hwloc_topology_t raw = topology.get();

  Topology t;
  t.numaDomains = countOf(raw, HWLOC_OBJ_NUMANODE);
  t.sockets = countOf(raw, HWLOC_OBJ_PACKAGE);
  t.cores = countOf(raw, HWLOC_OBJ_CORE);
  t.hardwareThreads = countOf(raw, HWLOC_OBJ_PU);
  bool gpuOsDevice = false;
  for (hwloc_obj_t dev = hwloc_get_next_osdev(raw, nullptr); dev != nullptr; dev = hwloc_get_next_osdev(raw, dev)) {
    Device d{dev->name ? dev->name : "", "", pciBusOf(dev), numaOf(raw, dev)};
    switch (dev->attr->osdev.type) {
      case HWLOC_OBJ_OSDEV_NETWORK:
        d.kind = "network";
        t.nics.push_back(d);
        break;
      case HWLOC_OBJ_OSDEV_OPENFABRICS:
        d.kind = "openfabrics";
        t.nics.push_back(d);
        break;
      case HWLOC_OBJ_OSDEV_GPU:
      case HWLOC_OBJ_OSDEV_COPROC:
        d.kind = dev->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU ? "gpu" : "coprocessor";
        t.gpus.push_back(d);
        gpuOsDevice = true;
        break;
      default: break;
    }
  }
  // Without the CUDA/NVML plugins hwloc still sees NVIDIA GPUs as PCI devices.
  if (!gpuOsDevice) {
    for (hwloc_obj_t pci = hwloc_get_next_pcidev(raw, nullptr); pci != nullptr; pci = hwloc_get_next_pcidev(raw, pci)) {
      if (isNvidiaDisplay(pci)) t.gpus.push_back({pciBusOf(pci), "pci", pciBusOf(pci), numaOf(raw, pci)});
    }
  }
  return t;
}

Placement placeOfThisProcess() {
  std::unique_ptr<hwloc_topology, TopologyDeleter> topology = load(false);
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  if (cpus == nullptr) fail(COMM_ERR_NO_MEMORY, "hwloc_bitmap_alloc failed");
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> owned(cpus, hwloc_bitmap_free);
  // Where the binding cannot be read, the process may run anywhere.
  if (hwloc_get_cpubind(topology.get(), cpus, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(cpus)) {
    hwloc_bitmap_copy(cpus, hwloc_topology_get_topology_cpuset(topology.get()));
  }
  return {holderOf(topology.get(), HWLOC_OBJ_NUMANODE, cpus), holderOf(topology.get(), HWLOC_OBJ_PACKAGE, cpus)};
}

std::string describe(const Topology& t) {
  std::string out = fmt::format("NUMA domains: {}, sockets: {}, cores: {}, hardware threads: {}\n", t.numaDomains,
                                t.sockets, t.cores, t.hardwareThreads);
  auto list = [&out](const char* what, const std::vector<Device>& devices) {
    out += fmt::format("{}: {}\n", what, devices.size());
    for (const Device& d : devices) {
      out += fmt::format("  {} ({}{}{}), NUMA domain {}\n", d.name, d.kind, d.pciBus.empty() ? "" : ", PCI ", d.pciBus,
                         d.numa < 0 ? std::string("unknown") : std::to_string(d.numa));
    }
  };
  list("NICs", t.nics);
  list("GPUs", t.gpus);
  return out;
}

}  // namespace comm::topo
