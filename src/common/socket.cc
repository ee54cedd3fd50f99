#include "common/socket.h"

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
