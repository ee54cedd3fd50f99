// The blob a rank publishes so peers can reach it: the provider name and raw
// endpoint name of every endpoint it opened.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace comm::transport {

struct EndpointAddress {
  std::string provider;       // "shm", "tcp;ofi_rxm"...
  std::vector<uint8_t> name;  // fi_getname's bytes
};

std::vector<uint8_t> encodeAddresses(const std::vector<EndpointAddress>& endpoints);
// Throws comm::Error (COMM_ERR_TRANSPORT) naming `rank` when the blob is not one
// encodeAddresses produced (e.g. a rank running another comm version).
std::vector<EndpointAddress> decodeAddresses(const std::vector<uint8_t>& blob, int rank);

}  // namespace comm::transport
