// Which CPUs each core of this node offers, for --bind-core.
#pragma once

#include <sched.h>

#include <vector>

namespace commrun {

// One CPU set per core this process may run on, in hwloc's logical order
// (neighbouring cores first). Throws std::runtime_error when hwloc fails.
std::vector<cpu_set_t> coreCpuSets();

}  // namespace commrun
