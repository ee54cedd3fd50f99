// Which interface tcp between nodes takes (transport/network_interface.h),
// over made-up interface lists: COMM_TCP_IFACE's first, then the route to
// the master address, then the first physical interface; never a docker or
// virtual-machine bridge while anything else is up.
#include <arpa/inet.h>

#include <optional>
#include <string>
#include <vector>

#include "transport/network_interface.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::transport::isVirtualInterface;
using comm::transport::NetworkInterface;
using comm::transport::pickInterface;

namespace {

in_addr address(const char* text) {
  in_addr parsed{};
  inet_pton(AF_INET, text, &parsed);
  return parsed;
}

NetworkInterface up(const char* name, const char* ip, bool loopback = false) {
  return {name, address(ip), loopback, {}};
}

const std::vector<NetworkInterface> kHost = {up("lo", "127.0.0.1", true),   up("docker0", "172.17.0.1"),
                                             up("br-5f3a", "172.18.0.1"),   up("virbr0", "192.168.122.1"),
                                             up("veth12ab", "169.254.0.1"), up("eth0", "10.0.0.5"),
                                             up("eth1", "10.1.0.5")};

std::string chosen(const std::vector<NetworkInterface>& list, const std::string& named = {},
                   std::optional<in_addr> toward = std::nullopt) {
  std::optional<NetworkInterface> pick = pickInterface(list, named, toward);
  return pick ? pick->name : "(none)";
}

void bridgesAndLoopbackAreSkipped(void**) { assert_string_equal(chosen(kHost).c_str(), "eth0"); }

void theRouteToTheMasterWins(void**) { assert_string_equal(chosen(kHost, {}, address("10.1.0.5")).c_str(), "eth1"); }

void aLoopbackRouteOrAnUnknownAddressIsNoPreference(void**) {
  // The master on this host by a name that maps to 127.0.1.1, or an address no interface holds.
  assert_string_equal(chosen(kHost, {}, address("127.0.1.1")).c_str(), "eth0");
  assert_string_equal(chosen(kHost, {}, address("192.0.2.9")).c_str(), "eth0");
}

void aNamedInterfaceOverridesEverything(void**) {
  assert_string_equal(chosen(kHost, "docker0", address("10.1.0.5")).c_str(), "docker0");
  assert_string_equal(chosen(kHost, "ib0").c_str(), "(none)");
}

void withoutPhysicalInterfacesABridgeBeatsLoopback(void**) {
  assert_string_equal(chosen({up("lo", "127.0.0.1", true), up("docker0", "172.17.0.1")}).c_str(), "docker0");
  assert_string_equal(chosen({up("lo", "127.0.0.1", true)}).c_str(), "lo");
  assert_string_equal(chosen({}).c_str(), "(none)");
}

void virtualNames(void**) {
  for (const char* name : {"docker0", "br-1c2d", "virbr0", "veth0a1b", "cni0", "flannel.1", "cali123", "vxlan.calico",
                           "kube-ipvs0", "lxcbr0", "podman0"}) {
    assert_true(isVirtualInterface(name));
  }
  for (const char* name : {"eth0", "ens5", "enp3s0f1", "ib0", "bond0", "wlan0", "br0"}) {
    assert_false(isVirtualInterface(name));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bridgesAndLoopbackAreSkipped),
      cmocka_unit_test(theRouteToTheMasterWins),
      cmocka_unit_test(aLoopbackRouteOrAnUnknownAddressIsNoPreference),
      cmocka_unit_test(aNamedInterfaceOverridesEverything),
      cmocka_unit_test(withoutPhysicalInterfacesABridgeBeatsLoopback),
      cmocka_unit_test(virtualNames),
  };
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
