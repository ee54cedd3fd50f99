#include "transport/network_interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <memory>

#include "common/error.h"
#include "common/socket.h"
#include "common/unique_fd.h"

namespace comm::transport {
namespace {

// Name prefixes of what docker, podman, libvirt, Kubernetes' network
// plugins and LXD make; NCCL skips docker* and lo for the same reason.
constexpr std::array<std::string_view, 11> kVirtualPrefixes = {"docker", "br-",   "virbr", "veth",  "cni",   "flannel",
                                                               "cali",   "vxlan", "kube-", "lxcbr", "podman"};

bool sameAddress(in_addr a, in_addr b) { return a.s_addr == b.s_addr; }

std::vector<NetworkInterface> listUpInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail(COMM_ERR_TRANSPORT, "tcp: cannot list interfaces: {}", errnoText(errno));
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, freeifaddrs);
  std::vector<NetworkInterface> up;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0) continue;
    up.push_back({i->ifa_name,
                  reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr,
                  (i->ifa_flags & IFF_LOOPBACK) != 0,
                  {}});
  }
  return up;
}

// The address the kernel would send from to reach `host`: a UDP socket's
// connect() picks the route and sends nothing.
std::optional<in_addr> sourceAddressToward(const std::string& host) {
  if (host.empty()) return std::nullopt;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &found) != 0) return std::nullopt;
  AddrInfoList list(found);
  UniqueFd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!probe.valid() || ::connect(probe.get(), list->ai_addr, list->ai_addrlen) != 0) return std::nullopt;
  sockaddr_in local{};
  socklen_t length = sizeof local;
  if (getsockname(probe.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) return std::nullopt;
  return local.sin_addr;
}

std::string text(in_addr address) {
  char buffer[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &address, buffer, sizeof buffer);
  return buffer;
}

}  // namespace

bool isVirtualInterface(std::string_view name) {
  for (std::string_view prefix : kVirtualPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::optional<NetworkInterface> pickInterface(const std::vector<NetworkInterface>& up, const std::string& named,
                                              std::optional<in_addr> towardMaster) {
  auto first = [&](auto matches, std::string why) -> std::optional<NetworkInterface> {
    for (const NetworkInterface& candidate : up) {
      if (matches(candidate)) {
        NetworkInterface chosen = candidate;
        chosen.why = std::move(why);
        return chosen;
      }
    }
    return std::nullopt;
  };
  if (!named.empty()) {
    return first([&](const NetworkInterface& i) { return i.name == named; }, "named by COMM_TCP_IFACE");
  }
  if (towardMaster && (ntohl(towardMaster->s_addr) >> 24) != 127) {
    if (auto routed = first([&](const NetworkInterface& i) { return sameAddress(i.address, *towardMaster); },
                            "the route to the master address")) {
      return routed;
    }
  }
  if (auto physical = first([](const NetworkInterface& i) { return !i.loopback && !isVirtualInterface(i.name); },
                            "the first that is not loopback or a virtual bridge")) {
    return physical;
  }
  if (auto virtualOne = first([](const NetworkInterface& i) { return !i.loopback; }, "the only non-loopback one")) {
    return virtualOne;
  }
  return first([](const NetworkInterface& i) { return i.loopback; }, "loopback: no other interface is up");
}

NetworkInterface chooseInterface(const std::string& named, const std::string& masterAddr) {
  const std::vector<NetworkInterface> up = listUpInterfaces();
  std::optional<NetworkInterface> chosen = pickInterface(up, named, sourceAddressToward(masterAddr));
  if (!chosen && !named.empty()) {
    fail(COMM_ERR_TRANSPORT, "tcp: no IPv4 interface named '{}' is up (tcp_iface, COMM_TCP_IFACE)", named);
  }
  if (!chosen) return {"lo", in_addr{htonl(INADDR_LOOPBACK)}, true, "loopback: no interface is up"};
  chosen->why = text(chosen->address) + ", " + chosen->why;
  return *chosen;
}

}  // namespace comm::transport
