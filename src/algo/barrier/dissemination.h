#pragma once

#include "core/collective_context.h"

namespace comm::algo {

using core::CollectiveContext;

void disseminationBarrier(CollectiveContext& ctx);

}  // namespace comm::algo
