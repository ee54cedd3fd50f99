// COMM_ALGO (the "algo" setting): "all_reduce:ring,broadcast:binomial"
// forces, per collective, one algorithm of its table
// (algo/selection/registry.h), which then runs wherever it fits
// (algo/selection/selection.h).
#pragma once

#include <string_view>

#include "core/world.h"

namespace comm::algo {

// Per collective kind, the algorithm the setting forces ("" for none).
// Throws INVALID_ARGUMENT naming the entry when an entry is not
// collective:algorithm, names no collective, or names an algorithm that its
// collective does not have.
core::AlgorithmOverrides parseAlgorithmOverrides(std::string_view setting);

}  // namespace comm::algo
