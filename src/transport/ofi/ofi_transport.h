// libfabric's transport (the "ofi" path): one endpoint of the provider
// Options::provider or FI_PROVIDER names (tcp;ofi_rxm between nodes by
// default, shm, verbs;ofi_rxm, efa...), tagged messages matched by libfabric.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/options.h"
#include "transport/transport.h"

namespace comm::transport {

// Opens the endpoint at once; throws comm::Error (COMM_ERR_TRANSPORT) naming
// the provider when none that fits can be opened.
std::unique_ptr<Transport> createOfiTransport(const Options& options);

// The libfabric providers (prov_name) that offer what the ofi transport
// needs on this machine, in libfabric's order of preference. Throws
// COMM_ERR_TRANSPORT when libfabric cannot be asked.
std::vector<std::string> usableOfiProviders();

// FI_PROVIDER, libfabric's own choice of provider ("" when unset): a name,
// or "^a,b" to exclude some.
std::string fabricProviderVariable();

}  // namespace comm::transport
