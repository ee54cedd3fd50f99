// What a comm-bench run was: the settings every output (table header, JSON)
// describes.
#pragma once

#include <string>

#include "collectives.h"
#include "options.h"

namespace commbench {

struct RunInfo {
  const Collective& collective;
  const Options& options;
  int ranks;
  std::string provider;  // as chosen: --provider, COMM_PROVIDER, or "default"

  double busFactor() const { return collective.busFactor(ranks); }
};

}  // namespace commbench
