// Where the steps of each phase of a hierarchical algorithm start: each
// phase runs a flat algorithm on a Subgroup (core/collective_context.h)
// from step phase x kPhaseSteps, so that phases never match each other's
// messages. No flat algorithm uses as many steps.
#pragma once

#include <cstdint>

namespace comm::algo {

inline constexpr uint32_t kPhaseSteps = uint32_t{1} << 24;

}  // namespace comm::algo
