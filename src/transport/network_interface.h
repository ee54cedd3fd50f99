// Which network interface tcp between nodes uses, comm's own and libfabric's
// alike: the one COMM_TCP_IFACE names; else the one this host reaches the
// master address through; else the first that is neither loopback nor a
// container's or virtual machine's bridge (docker0, br-*, virbr*, veth*...),
// which exist on many hosts with the same addresses and reach no other node.
#pragma once

#include <netinet/in.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace comm::transport {

struct NetworkInterface {
  std::string name;
  in_addr address{};  // its first IPv4 address
  bool loopback = false;
  std::string why;  // how it was chosen, for the log
};

// A bridge or link that container and virtual-machine managers make.
bool isVirtualInterface(std::string_view name);

// The choice among `up` (IPv4 interfaces that are up, in the system's
// order): `named` when not empty (nullopt when no interface has that name);
// else the interface holding `towardMaster` (the address this host would
// send from to reach the master) when it is not loopback; else the first
// physical one, the first virtual one, loopback.
std::optional<NetworkInterface> pickInterface(const std::vector<NetworkInterface>& up, const std::string& named,
                                              std::optional<in_addr> towardMaster);

// pickInterface over this host's interfaces and route to `masterAddr` ("":
// no preference). Throws comm::Error (COMM_ERR_TRANSPORT) when `named`
// names no IPv4 interface that is up, or the interfaces cannot be listed.
NetworkInterface chooseInterface(const std::string& named, const std::string& masterAddr);

}  // namespace comm::transport
