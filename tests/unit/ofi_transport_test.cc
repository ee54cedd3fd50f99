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
#include "common/handshake.h"
#include "common/unique_fd.h"
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
  options.secret = "transport test secret 0123456789";
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

// libfabric cannot take back a send the provider holds (rxm holds a large
// one until the receiver matches it): cancel leaves it pending instead of
// waiting for a cancellation that never comes, and it still arrives whole
// once the peer posts its receive. A small message goes first: until rxm's
// connection is up its sends wait in comm's backlog, which cancel may empty.
void test_rxm_cancel_leaves_held_send(void**) {
  constexpr size_t kSize = 4 * kMiB;
  runRanks(2, [&](Rank& self) {
    connectNetwork(self, withProvider("tcp;ofi_rxm"));
    std::vector<uint8_t> greeting(8);
    Request connected;
    if (self.rank == 0) self.transport->send(1, 3, greeting.data(), greeting.size(), connected);
    if (self.rank == 1) self.transport->recv(0, 3, greeting.data(), greeting.size(), connected);
    waitOk(*self.transport, connected);
    std::vector<uint8_t> data = self.rank == 0 ? pattern(kSize, 9) : std::vector<uint8_t>(kSize);
    Request request;
    if (self.rank == 0) {
      self.transport->send(1, 4, data.data(), data.size(), request);
      self.pump(20ms);
      self.transport->cancel(request);
      CHECK(!request.done.load(), "cancel ended a send the provider holds: status {} ({})",
            static_cast<int>(request.status), request.error);
    }
    self.barrier();
    if (self.rank == 1) self.transport->recv(0, 4, data.data(), data.size(), request);
    waitOk(*self.transport, request);
    if (self.rank == 1) checkPattern(data, data.size(), 9);
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

// A process without the job's secret: connects to the tcp transport at
// `address` (a localAddress() blob), sends `bytes` and then stays silent
// until the connection is closed.
comm::UniqueFd strangerConnection(const std::vector<uint8_t>& address, const std::string& bytes) {
  sockaddr_in to{};
  CHECK(address.size() == sizeof to, "address of {} bytes", address.size());
  std::memcpy(&to, address.data(), sizeof to);
  comm::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  CHECK(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0, "connect: {}", errno);
  CHECK(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()), "send");
  return fd;
}

// Strangers that reach rank 0's listener before rank 1 does (garbage, an
// introduction that claims to be rank 1, silence) are turned away: rank 1
// still connects, and what it sends arrives intact.
void test_tcp_strangers_first(void**) {
  runRanks(2, [&](Rank& self) {
    self.transport = comm::transport::createNetworkTransport(withProvider("tcp"));
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress());
    std::vector<comm::UniqueFd> strangers;
    if (self.rank == 1) {
      const uint64_t claimRankOne[2] = {0x31706374'6d6d6f63, 1};  // comm's first tcp introduction
      strangers.push_back(strangerConnection(peers[0].address, std::string(16, 'x')));
      strangers.push_back(
          strangerConnection(peers[0].address, std::string(reinterpret_cast<const char*>(claimRankOne), 16)));
      strangers.push_back(strangerConnection(peers[0].address, ""));
    }
    self.barrier();
    self.transport->connect(self.rank, peers);
    std::vector<uint8_t> data = pattern(5000, 7);
    Request request;
    if (self.rank == 1) {
      self.transport->send(0, 3, data.data(), data.size(), request);
    } else {
      std::fill(data.begin(), data.end(), 0);
      self.transport->recv(1, 3, data.data(), data.size(), request);
    }
    waitOk(*self.transport, request);
    checkPattern(data, data.size(), 7);
  });
}

// A rank that cannot prove the job's secret is not connected: it learns the
// peer refused it, and the peer, waiting for a rank that never proves it,
// times out naming how many are missing.
void test_tcp_wrong_secret_refused(void**) {
  runRanks(2, [&](Rank& self) {
    Options options = withProvider("tcp");
    options.tcp.connectTimeout = 3s;
    if (self.rank == 1) options.secret = "not the job's secret 0123456789";
    self.transport = comm::transport::createNetworkTransport(options);
    std::vector<PeerInfo> peers = self.exchange(self.transport->localAddress());
    if (self.rank == 1) {
      expectError(COMM_ERR_TRANSPORT, "refused this process's job secret",
                  [&] { self.transport->connect(self.rank, peers); });
    } else {
      expectError(COMM_ERR_TIMEOUT, "1 higher rank(s) did not connect",
                  [&] { self.transport->connect(self.rank, peers); });
    }
    self.transport.reset();
  });
}

// A peer that proved the job's secret (a rank gone wrong) and then sends
// what it likes: connects to the tcp transport at `address` as rank 1.
class LyingPeer {
 public:
  LyingPeer(const std::vector<uint8_t>& address, const std::string& secret) : fd_(strangerConnection(address, "")) {
    comm::Handshake handshake = comm::Handshake::connecting(secret, "comm tcp", 1);
    comm::runHandshake(fd_.get(), handshake, Deadline(kPatience), COMM_ERR_TRANSPORT, "lying peer");
  }
  // A message header as comm's tcp transport frames it (tcp_wire.h).
  void header(uint64_t tag, uint64_t size, uint32_t kind, uint32_t id = 0) {
    const uint64_t words[4] = {tag, size, uint64_t{kind} | uint64_t{id} << 32, 0};
    send(std::string(reinterpret_cast<const char*>(words), sizeof words));
  }
  void send(const std::string& bytes) {
    CHECK(::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()), "send");
  }

 private:
  comm::UniqueFd fd_;
};

constexpr uint32_t kEagerKind = 0;
constexpr uint32_t kRequestToSendKind = 1;

// Rank 0 of two, with `lie` (run once the lying peer is connected as rank
// 1) telling it things; returns its transport.
std::unique_ptr<Transport> meetLyingPeer(Options options, const std::function<void(LyingPeer&)>& lie) {
  auto transport = comm::transport::createNetworkTransport(options);
  std::vector<PeerInfo> peers(2);
  peers[0] = {transport->localAddress(), true};
  peers[1] = {std::vector<uint8_t>(sizeof(sockaddr_in), 0), true};
  std::unique_ptr<LyingPeer> peer;
  std::thread connecting([&] { peer = std::make_unique<LyingPeer>(peers[0].address, options.secret); });
  transport->connect(0, peers);
  connecting.join();
  lie(*peer);
  // The peer stays connected while rank 0 reads what it said.
  static std::vector<std::unique_ptr<LyingPeer>> kept;
  kept.push_back(std::move(peer));
  return transport;
}

// Waits for `request` and checks it failed with `status` saying `says`.
void expectFailure(Transport& transport, const Request& request, comm_status_t status, const char* says) {
  waitFor(transport, request);
  CHECK(request.status == status, "status {}: {}", static_cast<int>(request.status), request.error);
  CHECK(request.error.find(says) != std::string::npos, "error \"{}\" lacks \"{}\"", request.error, says);
}

// comm's tcp never believes a size a peer announces: a header claiming
// 2^62 or 4 GiB bytes fails the peer's connection (COMM_ERR_TRANSPORT
// naming it) instead of asking for that memory; more early messages than
// the unexpected-message limit wait in the socket until receives take them
// (back-pressure), and then all arrive; a message larger than its receive
// fails that receive (COMM_ERR_MISMATCH) and the connection goes on.
void test_tcp_lying_sizes(void**) {
  runRanks(1, [&](Rank&) {
    Options options = withProvider("tcp");
    options.singleNode = true;
    for (uint64_t claim : {uint64_t{1} << 62, uint64_t{4} << 30}) {
      auto transport = meetLyingPeer(options, [&](LyingPeer& peer) { peer.header(5, claim, kEagerKind); });
      std::vector<uint8_t> buffer(16);
      Request request;
      transport->recv(1, 6, buffer.data(), buffer.size(), request);
      expectFailure(*transport, request, COMM_ERR_TRANSPORT, "rank 1");
    }
    options.tcp.maxUnexpectedBytes = 1 << 20;
    auto flooded = meetLyingPeer(options, [&](LyingPeer& peer) {
      for (int i = 0; i < 20; ++i) {
        peer.header(7, 64 * 1024, kEagerKind);
        peer.send(std::string(64 * 1024, 'x'));
      }
    });
    for (int i = 0; i < 100; ++i) {
      flooded->progress();
      std::this_thread::sleep_for(1ms);
    }
    for (int i = 0; i < 20; ++i) {
      std::vector<uint8_t> message(64 * 1024, 0);
      Request request;
      flooded->recv(1, 7, message.data(), message.size(), request);
      waitOk(*flooded, request);
      CHECK(std::all_of(message.begin(), message.end(), [](uint8_t b) { return b == 'x'; }), "early message {}", i);
    }

    auto larger = meetLyingPeer(options, [&](LyingPeer& peer) {
      peer.header(9, uint64_t{1} << 62, kRequestToSendKind, 0);
      peer.header(10, 2048, kEagerKind);
      peer.send(std::string(2048, 'y'));
      peer.header(11, 4, kEagerKind);
      peer.send("good");
    });
    Request announced, eager, good;
    std::vector<uint8_t> small(1024);
    larger->recv(1, 9, small.data(), small.size(), announced);
    expectFailure(*larger, announced, COMM_ERR_MISMATCH, "rank 1");
    larger->recv(1, 10, small.data(), small.size(), eager);
    expectFailure(*larger, eager, COMM_ERR_MISMATCH, "rank 1");
    larger->recv(1, 11, small.data(), 4, good);
    waitOk(*larger, good);
    CHECK(std::memcmp(small.data(), "good", 4) == 0, "the message after the mismatches arrived wrong");
  });
}

}  // namespace

// An optional argument selects tests by name pattern ("test_tcp_*").
int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_errors),
      cmocka_unit_test(test_tcp_strangers_first),
      cmocka_unit_test(test_tcp_wrong_secret_refused),
      cmocka_unit_test(test_tcp_lying_sizes),
      cmocka_unit_test(test_auto_all_to_all_local),
      cmocka_unit_test(test_auto_all_to_all_remote),
      cmocka_unit_test(test_auto_without_shm),
      cmocka_unit_test(test_tcp_peer_exit),
      cmocka_unit_test(test_rxm_cancel_leaves_held_send),
      cmocka_unit_test(test_auto_routes),
      cmocka_unit_test(test_fi_provider_environment),
      cmocka_unit_test(test_rxm_interface),
      cmocka_unit_test(test_tcp_interface),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
