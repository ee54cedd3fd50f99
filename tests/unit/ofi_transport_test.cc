// What only the network transports do, between real processes
// (forked_ranks.h): libfabric's choice of provider per peer and its setup
// errors, the interface each binds, comm's tcp when a peer exits. What every
// transport does is in transport_conformance_test.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/deadline.h"
#include "common/error.h"
#include "transport/hybrid_transport.h"
#include "transport/ofi/ofi_address.h"
#include "transport/ofi/ofi_transport.h"
#include "transport/tcp/tcp_transport.h"

#include "forked_ranks.h"
#include "transport_test_support.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace transport_test;

using comm::Deadline;
using comm::transport::Options;
using comm::transport::PeerInfo;
using comm::transport::Request;
using comm::transport::Transport;
using namespace std::chrono_literals;

void runRanks(int size, const Body& body) { assert_int_equal(forkRanks(size, body), 0); }

// A rank's network transport (the one a world uses off the direct path).
void connectNetwork(Rank& self, const Options& options, bool sameNode = true) {
  self.connect(comm::transport::createNetworkTransport(options), sameNode);
}

Options withProvider(const char* provider) {
  Options options;
  options.provider = provider;
  options.singleNode = true;
  return options;
}

// Every rank sends a distinct message to every rank, itself included, with
// no provider forced: peers on the node go over shm, others over tcp;ofi_rxm.
void allToAll(const Options& options, bool sameNode) {
  runRanks(4, [&](Rank& self) {
    connectNetwork(self, options, sameNode);
    const char* expected = sameNode ? "shm" : "tcp;ofi_rxm";
    CHECK(self.transport->providerFor(self.peer()) == expected, "peer over {}, expected {}",
          self.transport->providerFor(self.peer()), expected);
    exchangeWithEveryone(self, [](int from, int to) -> size_t { return 100000 + 4096 * from + to; });
  });
}

void test_auto_all_to_all_local(void**) { allToAll(withProvider(""), true); }
// Peers pretend to be on other nodes (each rank reaches itself over shm).
void test_auto_all_to_all_remote(void**) { allToAll(withProvider(""), false); }

// Without shm (FI_PROVIDER=^shm excludes it) peers on the node use tcp.
void test_auto_without_shm(void**) {
  runRanks(2, [&](Rank& self) {
    setenv("FI_PROVIDER", "^shm", 1);
    connectNetwork(self, withProvider(""));
    CHECK(self.transport->providerFor(self.peer()) == "tcp;ofi_rxm", "peer over {}",
          self.transport->providerFor(self.peer()));
    std::vector<uint8_t> out = pattern(kMiB, self.rank);
    std::vector<uint8_t> in(kMiB);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, out.data(), out.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

// A peer that exits fails what waits on it, naming it; messages that had
// arrived whole are still received.
void test_tcp_peer_exit(void**) {
  runRanks(2, [&](Rank& self) {
    connectNetwork(self, withProvider("tcp"));
    std::vector<uint8_t> small = pattern(100, 5);
    if (self.rank == 1) {
      Request sent;
      self.transport->send(0, 1, small.data(), small.size(), sent);
      waitOk(*self.transport, sent);
      self.barrier();
      std::fflush(nullptr);
      _exit(0);  // no goodbye: the connection just closes
    }
    self.barrier();
    std::vector<uint8_t> large(2 * kMiB);
    Request pending, arrived;
    self.transport->recv(1, 2, large.data(), large.size(), pending);
    waitFor(*self.transport, pending);
    CHECK(pending.status == COMM_ERR_REMOTE && pending.error.find("rank 1") != std::string::npos, "status {} ({})",
          static_cast<int>(pending.status), pending.error);
    std::fill(small.begin(), small.end(), 0);
    self.transport->recv(1, 1, small.data(), small.size(), arrived);
    waitOk(*self.transport, arrived);
    checkPattern(small, small.size(), 5);
    Request late;
    self.transport->send(1, 3, small.data(), small.size(), late);
    waitFor(*self.transport, late);
    CHECK(late.status == COMM_ERR_REMOTE, "a send to the gone rank: status {}", static_cast<int>(late.status));
    std::fflush(nullptr);
    _exit(0);  // the harness's closing barrier would wait for rank 1
  });
}

void test_auto_routes(void**) {
  runRanks(2, [&](Rank& self) {
    Options options = withProvider("");
    self.transport = comm::transport::createOfiTransport(options);
    // Rank 1 is on this node, rank 0 pretends the other is not.
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress());
    peers[self.peer()].sameNode = false;
    self.transport->connect(self.rank, peers);
    CHECK(self.transport->providerFor(self.rank) == "shm", "self over {}", self.transport->providerFor(self.rank));
    CHECK(self.transport->providerFor(self.peer()) == "tcp;ofi_rxm", "peer over {}",
          self.transport->providerFor(self.peer()));
  });
}

// Off a single node tcp;ofi_rxm binds to the interface the tcp_iface setting
// (COMM_TCP_IFACE) names.
void test_rxm_interface(void**) {
  runRanks(2, [&](Rank& self) {
    unsetenv("FI_TCP_IFACE");
    Options options = withProvider("tcp;ofi_rxm");
    options.singleNode = false;
    options.tcpInterface = "lo";
    self.transport = comm::transport::createOfiTransport(options);
    std::vector<uint8_t> blob = self.transport->localAddress();
    std::vector<comm::transport::EndpointAddress> endpoints = comm::transport::decodeAddresses(blob, self.rank);
    CHECK(endpoints.size() == 1 && endpoints[0].provider == "tcp;ofi_rxm", "{} endpoints", endpoints.size());
    sockaddr_in address{};
    CHECK(endpoints[0].name.size() == sizeof address, "address of {} bytes", endpoints[0].name.size());
    std::memcpy(&address, endpoints[0].name.data(), sizeof address);
    CHECK(address.sin_family == AF_INET && ntohl(address.sin_addr.s_addr) == INADDR_LOOPBACK,
          "bound to family {} address {:#x}", address.sin_family, ntohl(address.sin_addr.s_addr));
    self.transport->connect(self.rank, self.exchange(blob));
    std::vector<uint8_t> out = pattern(1000, self.rank);
    std::vector<uint8_t> in(1000);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, out.data(), out.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

// FI_PROVIDER forces one provider when Options does not name one.
void test_fi_provider_environment(void**) {
  runRanks(2, [&](Rank& self) {
    setenv("FI_PROVIDER", "shm", 1);
    connectNetwork(self, withProvider(""), false);
    CHECK(self.transport->providerFor(self.peer()) == "shm", "peer over {}", self.transport->providerFor(self.peer()));
    std::vector<uint8_t> data = pattern(100, self.rank);
    std::vector<uint8_t> in(100);
    Request sent, received;
    self.transport->recv(self.peer(), 1, in.data(), in.size(), received);
    self.transport->send(self.peer(), 1, data.data(), data.size(), sent);
    waitOk(*self.transport, sent);
    waitOk(*self.transport, received);
    checkPattern(in, in.size(), self.peer());
  });
}

template <typename Call>
void expectError(comm_status_t status, const char* says, Call&& call) {
  try {
    call();
  } catch (const comm::Error& error) {
    CHECK(error.status() == status, "status {} ({})", static_cast<int>(error.status()), error.what());
    CHECK(std::string(error.what()).find(says) != std::string::npos, "message \"{}\" lacks \"{}\"", error.what(), says);
    return;
  }
  CHECK(false, "no error; expected one saying \"{}\"", says);
}

// Errors that name their cause: unknown provider, a peer without the forced
// provider, a malformed address, a rank out of range.
void test_setup_errors(void**) {
  runRanks(1, [&](Rank&) {
    expectError(COMM_ERR_TRANSPORT, "no-such-provider",
                [] { comm::transport::createOfiTransport(withProvider("no-such-provider")); });
    auto shm = comm::transport::createOfiTransport(withProvider("shm"));
    auto tcp = comm::transport::createOfiTransport(withProvider("tcp"));
    expectError(COMM_ERR_TRANSPORT, "rank 1 offers shm", [&] {
      tcp->connect(0, {{tcp->localAddress(), true}, {shm->localAddress(), true}});
    });
    expectError(COMM_ERR_TRANSPORT, "rank 1's address", [&] {
      shm->connect(0, {{shm->localAddress(), true}, {{1, 9, 9}, true}});
    });
    shm->connect(0, {{shm->localAddress(), true}});
    Request request;
    uint8_t byte = 0;
    expectError(COMM_ERR_INVALID_ARGUMENT, "rank 3", [&] { shm->send(3, 0, &byte, 1, request); });
  });
}

// Off a single node comm's tcp listens on the interface the tcp_iface setting
// names, and says so when there is no such interface.
void test_tcp_interface(void**) {
  runRanks(1, [&](Rank&) {
    Options options = withProvider("tcp");
    options.singleNode = false;
    options.tcpInterface = "lo";
    auto transport = comm::transport::createTcpTransport(options);
    std::vector<uint8_t> blob = transport->localAddress();
    sockaddr_in address{};
    CHECK(blob.size() == sizeof address, "address of {} bytes", blob.size());
    std::memcpy(&address, blob.data(), sizeof address);
    CHECK(address.sin_family == AF_INET && ntohl(address.sin_addr.s_addr) == INADDR_LOOPBACK && address.sin_port != 0,
          "listening on family {} address {:#x} port {}", address.sin_family, ntohl(address.sin_addr.s_addr),
          ntohs(address.sin_port));
    options.tcpInterface = "no-such-interface0";
    expectError(COMM_ERR_TRANSPORT, "no-such-interface0", [&] { comm::transport::createTcpTransport(options); });
  });
}

}  // namespace

// An optional argument selects tests by name pattern ("test_tcp_*").
int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_errors),
      cmocka_unit_test(test_auto_all_to_all_local),
      cmocka_unit_test(test_auto_all_to_all_remote),
      cmocka_unit_test(test_auto_without_shm),
      cmocka_unit_test(test_tcp_peer_exit),
      cmocka_unit_test(test_auto_routes),
      cmocka_unit_test(test_fi_provider_environment),
      cmocka_unit_test(test_rxm_interface),
      cmocka_unit_test(test_tcp_interface),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
