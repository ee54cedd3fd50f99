// Small TCP helpers shared by the store's server and client.
#pragma once

#include <netdb.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace comm {

struct AddrInfoDeleter {
  void operator()(addrinfo* list) const { freeaddrinfo(list); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// getaddrinfo for TCP on host:port; "" or "0.0.0.0" with `passive` means every
// interface. Returns the getaddrinfo status (0 = success, see gai_strerror).
int resolveTcp(const std::string& host, uint16_t port, bool passive, AddrInfoList& out);

// When `host` is a name (not a numeric address) that resolves here only to
// loopback addresses, the first of them ("127.0.1.1": Debian maps a host's
// own name there); else nullopt, also when it does not resolve.
std::optional<std::string> loopbackNameAddress(const std::string& host);

// "host:port", bracketing IPv6 literals.
std::string endpointName(const std::string& host, uint16_t port);

// The text of an errno value; thread-safe unlike strerror.
std::string errnoText(int error);

// Turn off Nagle: store messages are small request/response pairs where
// batching only adds latency.
void setNoDelay(int fd);

}  // namespace comm
