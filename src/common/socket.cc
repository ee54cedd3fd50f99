#include "common/socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <system_error>

namespace comm {

int resolveTcp(const std::string& host, uint16_t port, bool passive, AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const bool everyInterface = passive && (host.empty() || host == "0.0.0.0");
  if (everyInterface) hints.ai_family = AF_INET;
  const std::string service = std::to_string(port);
  addrinfo* list = nullptr;
  int status = getaddrinfo(everyInterface ? nullptr : host.c_str(), service.c_str(), &hints, &list);
  out.reset(status == 0 ? list : nullptr);
  return status;
}

std::optional<std::string> loopbackNameAddress(const std::string& host) {
  in6_addr numeric{};
  if (host.empty() || inet_pton(AF_INET, host.c_str(), &numeric) == 1 ||
      inet_pton(AF_INET6, host.c_str(), &numeric) == 1) {
    return std::nullopt;
  }
  AddrInfoList list;
  if (resolveTcp(host, 0, false, list) != 0) return std::nullopt;
  std::optional<std::string> first;
  for (const addrinfo* entry = list.get(); entry != nullptr; entry = entry->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (entry->ai_family == AF_INET) {
      const in_addr address = reinterpret_cast<const sockaddr_in*>(entry->ai_addr)->sin_addr;
      if ((ntohl(address.s_addr) >> 24) != 127) return std::nullopt;
      inet_ntop(AF_INET, &address, text, sizeof(text));
    } else if (entry->ai_family == AF_INET6) {
      const in6_addr& address = reinterpret_cast<const sockaddr_in6*>(entry->ai_addr)->sin6_addr;
      if (!IN6_IS_ADDR_LOOPBACK(&address)) return std::nullopt;
      inet_ntop(AF_INET6, &address, text, sizeof(text));
    } else {
      return std::nullopt;
    }
    if (!first) first = text;
  }
  return first;
}

std::string endpointName(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return (host.empty() ? std::string("0.0.0.0") : host) + ":" + std::to_string(port);
}

std::string errnoText(int error) { return std::generic_category().message(error); }

void setNoDelay(int fd) {
  int on = 1;
  // Failure only costs latency, so it is not an error.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace comm
