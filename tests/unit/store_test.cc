// StoreServer + StoreClient over loopback: the four verbs, blocking in the
// server, concurrency, deadlines and shutdown.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "common/error.h"
#include "common/handshake.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::Deadline;
using comm::bootstrap::StoreClient;
using comm::bootstrap::StoreLimits;
using comm::bootstrap::StoreServer;
using comm::bootstrap::StoreUsage;
using namespace std::chrono_literals;

namespace {

const std::string kHost = "127.0.0.1";
const std::string kSecret = "store test secret 0123456789abcdef";

Deadline within(std::chrono::milliseconds timeout) { return Deadline(timeout); }
// Generous: what a test waits for "soon" must come even on a busy machine.
Deadline soon() { return Deadline(120s); }

// Runs `call`, which must throw comm::Error, and returns that error.
template <typename Call>
comm::Error errorOf(Call&& call) {
  try {
    call();
  } catch (const comm::Error& error) {
    return error;
  }
  fail_msg("expected a comm::Error");
  return comm::Error(COMM_OK, "");
}

void assertContains(const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos) fail_msg("'%s' does not contain '%s'", text.c_str(), part.c_str());
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A loopback port where nothing listens: bound (so no one else takes it
// during the test) but never listening, so connections are refused.
struct DeadPort {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  uint16_t port = 0;
  DeadPort() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t length = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
  }
  ~DeadPort() { close(fd); }
};

// A process without the job's secret: a plain socket that speaks the
// store's protocol but skips whatever proof the store asks for.
struct Stranger {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  explicit Stranger(uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    assert_int_equal(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  }
  ~Stranger() { close(fd); }
  void send(const std::string& bytes) const {
    assert_int_equal(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // Everything the store sends until it closes the connection, or until
  // what arrived contains `secret` (the attack worked: no need to wait).
  std::string readUntilClosed(const std::string& secret) const {
    std::string got;
    char buffer[4096];
    Deadline deadline = soon();
    while (got.find(secret) == std::string::npos && !deadline.expired()) {
      pollfd entry{fd, POLLIN, 0};
      if (poll(&entry, 1, 100) <= 0) continue;
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
    return got;
  }
};

void setThenGetReturnsExactBytes(void**) {
  StoreServer server(kHost, 0, kSecret);
  assert_true(server.port() > 0);
  StoreClient client(kHost, server.port(), kSecret, soon());
  const std::string binary("a\0b\xff\n", 5);
  std::string large(1 << 20, '\0');
  std::iota(large.begin(), large.end(), 0);

  client.set("small", "value", soon());
  client.set("binary", binary, soon());
  client.set("large", large, soon());
  client.set("empty", "", soon());

  assert_string_equal(client.get("small", soon()).c_str(), "value");
  assert_true(client.get("binary", soon()) == binary);
  assert_true(client.get("large", soon()) == large);
  assert_true(client.get("empty", soon()).empty());
  client.set("small", "replaced", soon());
  assert_string_equal(client.get("small", soon()).c_str(), "replaced");
}

void getBlocksUntilAnotherClientSets(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient reader(kHost, server.port(), kSecret, soon());
  StoreClient writer(kHost, server.port(), kSecret, soon());
  const auto start = std::chrono::steady_clock::now();
  auto value = std::async(std::launch::async, [&] { return reader.get("late", soon()); });
  assert_true(value.wait_for(200ms) == std::future_status::timeout);
  writer.set("late", "here", soon());
  assert_string_equal(value.get().c_str(), "here");
  assert_true(secondsSince(start) >= 0.2);
}

void waitReturnsOnlyWhenEveryKeyExists(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient waiter(kHost, server.port(), kSecret, soon());
  StoreClient writer(kHost, server.port(), kSecret, soon());
  writer.set("k1", "1", soon());
  auto done = std::async(std::launch::async, [&] { waiter.wait({"k1", "k2", "k3", "k2"}, soon()); });
  writer.set("k2", "2", soon());
  assert_true(done.wait_for(100ms) == std::future_status::timeout);
  writer.set("k3", "3", soon());
  assert_true(done.wait_for(120s) == std::future_status::ready);
  done.get();
  waiter.wait({}, soon());
  waiter.wait({"k1", "k3"}, soon());
}

void addIsAtomicAcrossClients(void**) {
  constexpr int kThreads = 8;
  constexpr int kAddsEach = 200;
  StoreServer server(kHost, 0, kSecret);
  std::vector<std::vector<int64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StoreClient client(kHost, server.port(), kSecret, soon());
      for (int i = 0; i < kAddsEach; ++i) seen[t].push_back(client.add("counter", 1, soon()));
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<int64_t> all;
  for (const auto& values : seen) all.insert(all.end(), values.begin(), values.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(kThreads * kAddsEach);
  std::iota(expected.begin(), expected.end(), 1);
  assert_true(all == expected);

  StoreClient client(kHost, server.port(), kSecret, soon());
  assert_string_equal(client.get("counter", soon()).c_str(), "1600");
  assert_int_equal(client.add("counter", -600, soon()), 1000);
  assert_int_equal(client.add("fresh", -5, soon()), -5);
}

void addRejectsANonIntegerValue(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient client(kHost, server.port(), kSecret, soon());
  client.set("word", "abc", soon());
  comm::Error error = errorOf([&] { client.add("word", 1, soon()); });
  assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
  assertContains(error.what(), "'word'");
  assertContains(error.what(), "not an integer");
  assert_int_equal(client.add("n", 2, soon()), 2);
}

void addBlocksAGetWaitingOnItsKey(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient reader(kHost, server.port(), kSecret, soon());
  StoreClient writer(kHost, server.port(), kSecret, soon());
  auto value = std::async(std::launch::async, [&] { return reader.get("count", soon()); });
  assert_true(value.wait_for(50ms) == std::future_status::timeout);
  writer.add("count", 7, soon());
  assert_string_equal(value.get().c_str(), "7");
}

// Racing clients each propose a value; every one of them gets the first
// one's, the store keeps it, a later proposal changes nothing, and a get
// parked on the key is answered with it.
void setIfAbsentGivesEveryClientTheFirstValue(void**) {
  constexpr int kThreads = 8;
  StoreServer server(kHost, 0, kSecret);
  StoreClient reader(kHost, server.port(), kSecret, soon());
  auto parked = std::async(std::launch::async, [&] { return reader.get("decision", soon()); });
  std::vector<std::string> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StoreClient client(kHost, server.port(), kSecret, soon());
      got[t] = client.setIfAbsent("decision", "proposal " + std::to_string(t), soon());
    });
  }
  for (std::thread& thread : threads) thread.join();
  assert_true(got[0].starts_with("proposal "));
  for (const std::string& value : got) assert_string_equal(value.c_str(), got[0].c_str());
  assert_string_equal(parked.get().c_str(), got[0].c_str());
  StoreClient client(kHost, server.port(), kSecret, soon());
  assert_string_equal(client.setIfAbsent("decision", "late", soon()).c_str(), got[0].c_str());
  assert_string_equal(client.get("decision", soon()).c_str(), got[0].c_str());
}

void checkDoesNotWait(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient client(kHost, server.port(), kSecret, soon());
  assert_false(client.check("absent", soon()).has_value());
  client.set("present", "yes", soon());
  auto value = client.check("present", soon());
  assert_true(value.has_value());
  assert_string_equal(value->c_str(), "yes");
}

void getTimeoutNamesKeyAndServerThenRecovers(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient client(kHost, server.port(), kSecret, soon());
  const auto start = std::chrono::steady_clock::now();
  comm::Error error = errorOf([&] { client.get("never-set", within(300ms)); });
  const double elapsed = secondsSince(start);
  assert_int_equal(error.status(), COMM_ERR_TIMEOUT);
  assertContains(error.what(), "get('never-set')");
  assertContains(error.what(), "127.0.0.1:" + std::to_string(server.port()));
  assert_true(elapsed >= 0.29 && elapsed < 3.0);

  // The server still holds the abandoned get: its late answer must not be
  // mistaken for the answers to the calls that follow.
  client.set("never-set", "now", soon());
  client.set("other", "x", soon());
  assert_string_equal(client.get("other", soon()).c_str(), "x");
  assert_string_equal(client.get("never-set", soon()).c_str(), "now");
}

void waitTimeoutNamesTheKeys(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient client(kHost, server.port(), kSecret, soon());
  client.set("a", "1", soon());
  comm::Error error = errorOf([&] { client.wait({"a", "b"}, within(200ms)); });
  assert_int_equal(error.status(), COMM_ERR_TIMEOUT);
  assertContains(error.what(), "wait('a', 'b')");
}

void connectToADeadPortTimesOut(void**) {
  DeadPort dead;
  const auto start = std::chrono::steady_clock::now();
  comm::Error error = errorOf([&] { StoreClient client(kHost, dead.port, kSecret, within(400ms)); });
  const double elapsed = secondsSince(start);
  assert_int_equal(error.status(), COMM_ERR_TIMEOUT);
  assertContains(error.what(), "127.0.0.1:" + std::to_string(dead.port));
  assertContains(error.what(), "refused");
  assert_true(elapsed >= 0.39 && elapsed < 3.0);
}

void connectRetriesUntilTheServerStarts(void**) {
  uint16_t port = 0;
  {
    DeadPort probe;
    port = probe.port;
  }
  auto connected = std::async(std::launch::async, [&] {
    StoreClient client(kHost, port, kSecret, soon());
    return client.get("ready", soon());
  });
  std::this_thread::sleep_for(300ms);
  StoreServer server(kHost, port, kSecret);
  StoreClient(kHost, port, kSecret, soon()).set("ready", "yes", soon());
  assert_string_equal(connected.get().c_str(), "yes");
}

void listeningOnABusyPortFails(void**) {
  StoreServer first(kHost, 0, kSecret);
  comm::Error error = errorOf([&] { StoreServer second(kHost, first.port(), kSecret); });
  assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
  assertContains(error.what(), "127.0.0.1:" + std::to_string(first.port()));
}

void clientLeavingWhileParkedDoesNotDisturbTheServer(void**) {
  StoreServer server(kHost, 0, kSecret);
  {
    StoreClient leaver(kHost, server.port(), kSecret, soon());
    errorOf([&] { leaver.wait({"x", "y"}, within(50ms)); });
  }
  StoreClient stayer(kHost, server.port(), kSecret, soon());
  stayer.set("x", "1", soon());
  stayer.set("y", "2", soon());
  assert_string_equal(stayer.get("y", soon()).c_str(), "2");
}

void shutdownWithClientsConnectedIsPrompt(void**) {
  auto server = std::make_unique<StoreServer>(kHost, 0, kSecret);
  const uint16_t port = server->port();
  StoreClient blocked(kHost, port, kSecret, soon());
  StoreClient idle(kHost, port, kSecret, soon());
  idle.set("k", "v", soon());
  auto parked =
      std::async(std::launch::async, [&] { return errorOf([&] { blocked.get("never", Deadline::never()); }); });
  assert_true(parked.wait_for(100ms) == std::future_status::timeout);

  const auto start = std::chrono::steady_clock::now();
  server.reset();
  assert_true(secondsSince(start) < 1.0);
  assert_true(parked.wait_for(120s) == std::future_status::ready);
  comm::Error error = parked.get();
  assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
  assertContains(error.what(), "closed the connection");
  assert_int_equal(errorOf([&] { idle.get("k", soon()); }).status(), COMM_ERR_BOOTSTRAP);
}

// A stranger can neither read a key nor write one (a forged failure once
// aborted a healthy job): the store closes its connection unanswered.
void aStrangerReadsAndWritesNothing(void**) {
  using comm::bootstrap::FrameWriter;
  using comm::bootstrap::StoreOp;
  StoreServer server(kHost, 0, kSecret);
  StoreClient member(kHost, server.port(), kSecret, soon());
  member.set("peer/0", "private-value", soon());
  Stranger stranger(server.port());
  stranger.send(FrameWriter().u8(uint8_t(StoreOp::kGet)).u64(1).bytes("peer/0").finish());
  stranger.send(FrameWriter().u8(uint8_t(StoreOp::kSet)).u64(2).bytes("commrun/failed").bytes("forged").finish());
  stranger.send(FrameWriter().u8(uint8_t(StoreOp::kCheck)).u64(3).bytes("peer/0").finish());
  const std::string answer = stranger.readUntilClosed("private-value");
  assert_true(answer.find("private-value") == std::string::npos);
  assert_false(member.check("commrun/failed", soon()).has_value());
  assert_string_equal(member.get("peer/0", soon()).c_str(), "private-value");
}

void aClientWithAnotherSecretIsRefused(void**) {
  StoreServer server(kHost, 0, kSecret);
  comm::Error error =
      errorOf([&] { StoreClient impostor(kHost, server.port(), "another secret 0123456789abcdef", soon()); });
  assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
  assertContains(error.what(), "127.0.0.1:" + std::to_string(server.port()));
  assertContains(error.what(), "refused this process's job secret");
  StoreClient member(kHost, server.port(), kSecret, soon());
  member.set("k", "v", soon());
  assert_string_equal(member.get("k", soon()).c_str(), "v");
}

// A client talks only to its job's store: a server that cannot prove the
// secret (one that took the port first) learns nothing from it.
void aStoreWithoutTheSecretIsNotTrusted(void**) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  assert_int_equal(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  assert_int_equal(listen(listener, 1), 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  auto impostor = std::async(std::launch::async, [&] {
    int client = accept(listener, nullptr, nullptr);
    comm::Handshake handshake = comm::Handshake::accepting("the impostor's secret 0123456789", "comm store");
    const std::string challenge = handshake.takeOutput();
    ::send(client, challenge.data(), challenge.size(), MSG_NOSIGNAL);
    char answer[comm::Handshake::kAnswerBytes];
    size_t got = 0;
    while (got < sizeof(answer)) {
      ssize_t n = recv(client, answer + got, sizeof(answer) - got, 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    // Whatever it says next cannot be the proof the client expects.
    const std::string guess(comm::Handshake::kConfirmationBytes, '\x5a');
    ::send(client, guess.data(), guess.size(), MSG_NOSIGNAL);
    char more[256];
    const ssize_t after = recv(client, more, sizeof(more), 0);
    close(client);
    return after;
  });
  comm::Error error = errorOf([&] { StoreClient client(kHost, ntohs(address.sin_port), kSecret, soon()); });
  assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
  assertContains(error.what(), "not this job's");
  assert_int_equal(impostor.get(), 0);  // the client closed without a request
  close(listener);
}

// Polls the server's usage until `done` holds for it; the test fails if it
// never does.
template <typename Done>
StoreUsage awaitUsage(const StoreServer& server, Done done) {
  Deadline deadline = soon();
  for (;;) {
    StoreUsage usage = server.usage();
    if (done(usage)) return usage;
    if (deadline.expired()) {
      fail_msg(
          "store usage never reached the state waited for: %zu clients, %zu unproven, %zu bytes held, %zu parked "
          "waits on %zu keys, %zu reply bytes pending",
          usage.clients, usage.unproven, usage.bytesHeld, usage.parkedWaits, usage.parkedKeys, usage.pendingReplyBytes);
    }
    std::this_thread::sleep_for(5ms);
  }
}

void aKeyOrValueOverTheLimitIsRefusedAndTheClientDropped(void**) {
  StoreServer server(kHost, 0, kSecret, StoreLimits{.maxKeyBytes = 64, .maxValueBytes = 1024});
  {
    StoreClient client(kHost, server.port(), kSecret, soon());
    comm::Error error = errorOf([&] { client.set("k", std::string(1100, 'v'), soon()); });
    assert_int_equal(error.status(), COMM_ERR_BOOTSTRAP);
    assertContains(error.what(), "set('k'): a value of 1100 bytes, over the limit of 1024 bytes");
    // The server has dropped the client: its next request fails on the
    // connection (closed or reset, whichever the kernel reports first).
    comm::Error dropped = errorOf([&] { client.get("k", soon()); });
    assert_int_equal(dropped.status(), COMM_ERR_BOOTSTRAP);
    assertContains(dropped.what(), "store get('k')");
  }
  {
    StoreClient client(kHost, server.port(), kSecret, soon());
    comm::Error error = errorOf([&] { client.set(std::string(100, 'k'), "v", soon()); });
    assertContains(error.what(), "a key of 100 bytes, over the limit of 64 bytes");
  }
  {
    // Too large to be a request at all: refused from its length alone.
    StoreClient client(kHost, server.port(), kSecret, soon());
    comm::Error error = errorOf([&] { client.set("k", std::string(64 << 20, 'v'), soon()); });
    assertContains(error.what(), "over the limit of 1152 bytes");
  }
  StoreClient member(kHost, server.port(), kSecret, soon());
  assert_false(member.check("k", soon()).has_value());
  member.set("k", std::string(1024, 'v'), soon());
  awaitUsage(server, [](const StoreUsage& u) { return u.bytesHeld == 1025; });
}

void theBytesHeldAreBounded(void**) {
  StoreServer server(kHost, 0, kSecret, StoreLimits{.maxBytesHeld = 4096});
  StoreClient client(kHost, server.port(), kSecret, soon());
  for (int k = 0; k < 4; ++k) client.set(fmt::format("k{}", k), std::string(1000, 'v'), soon());
  client.set("k0", std::string(1000, 'w'), soon());  // replacing a value holds no more
  assert_int_equal(client.add("n", 7, soon()), 7);
  comm::Error error = errorOf([&] { client.set("k4", std::string(1000, 'v'), soon()); });
  assertContains(error.what(), "set('k4'): holding 1002 more bytes would pass the store's limit of 4096 bytes");
  StoreClient other(kHost, server.port(), kSecret, soon());
  assert_false(other.check("k4", soon()).has_value());
  assert_true(other.get("k0", soon()) == std::string(1000, 'w'));
  awaitUsage(server, [](const StoreUsage& u) { return u.bytesHeld == 4 * 1002 + 2; });
}

// A process that proved the secret through a plain socket, to speak the
// protocol in ways StoreClient never does.
struct Member {
  Stranger socket;
  explicit Member(uint16_t port) : socket(port) {
    comm::Handshake handshake = comm::Handshake::connecting(kSecret, "comm store", 0);
    comm::runHandshake(socket.fd, handshake, soon(), COMM_ERR_BOOTSTRAP, "test member");
  }
};

// Gets that a client sends without reading the answers make the server
// stop reading it once the unread answers pass the limit, instead of
// holding them all; once it reads, the rest are answered.
void aClientThatDoesNotReadIsNotReadFrom(void**) {
  using comm::bootstrap::FrameWriter;
  using comm::bootstrap::StoreOp;
  constexpr size_t kValue = 1 << 20;
  constexpr int kGets = 64;
  const StoreLimits limits{.maxPendingReplyBytes = 2 << 20};
  StoreServer server(kHost, 0, kSecret, limits);
  StoreClient(kHost, server.port(), kSecret, soon()).set("big", std::string(kValue, 'v'), soon());
  Member greedy(server.port());
  std::string requests;
  for (int i = 0; i < kGets; ++i) requests += FrameWriter().u8(uint8_t(StoreOp::kGet)).u64(i).bytes("big").finish();
  std::thread sender([&] { greedy.socket.send(requests); });
  StoreUsage held =
      awaitUsage(server, [&](const StoreUsage& u) { return u.pendingReplyBytes >= limits.maxPendingReplyBytes; });
  assert_true(held.pendingReplyBytes <= limits.maxPendingReplyBytes + kValue + 64);
  size_t answered = 0;
  std::string in;
  char buffer[65536];
  const size_t answerBytes = 4 + 8 + 1 + 4 + kValue;
  while (answered < kGets) {
    ssize_t n = recv(greedy.socket.fd, buffer, sizeof(buffer), 0);
    assert_true(n > 0);
    in.append(buffer, static_cast<size_t>(n));
    answered += in.size() / answerBytes;
    in.erase(0, in.size() / answerBytes * answerBytes);
    assert_true(server.usage().pendingReplyBytes <= limits.maxPendingReplyBytes + kValue + 64);
  }
  sender.join();
  assert_int_equal(answered, kGets);
}

// Gets and waits parked for keys that never come are freed with their
// client: nothing of them stays in the server.
void parkedWaitsAreFreedWhenTheirClientGoes(void**) {
  constexpr size_t kParked = 300;
  StoreServer server(kHost, 0, kSecret);
  {
    StoreClient client(kHost, server.port(), kSecret, soon());
    for (size_t i = 0; i < kParked; ++i) errorOf([&] { client.get(fmt::format("never/{}", i), within(1ms)); });
    errorOf([&] { client.wait({"never/a", "never/b", "never/a"}, within(1ms)); });
    StoreUsage parked = awaitUsage(server, [&](const StoreUsage& u) { return u.parkedWaits == kParked + 1; });
    assert_int_equal(parked.parkedKeys, kParked + 2);
  }
  StoreUsage left = awaitUsage(server, [](const StoreUsage& u) { return u.clients == 0; });
  assert_int_equal(left.parkedWaits, 0);
  assert_int_equal(left.parkedKeys, 0);
}

void parkedWaitsAreBoundedPerClient(void**) {
  StoreServer server(kHost, 0, kSecret, StoreLimits{.maxParkedPerClient = 10});
  StoreClient client(kHost, server.port(), kSecret, soon());
  for (int i = 0; i < 10; ++i) errorOf([&] { client.get(fmt::format("never/{}", i), within(1ms)); });
  comm::Error error = errorOf([&] { client.get("never/10", soon()); });
  assertContains(error.what(), "10 of its requests already wait for keys, the limit per client");
  awaitUsage(server, [](const StoreUsage& u) { return u.clients == 0 && u.parkedWaits == 0; });
}

// Strangers that connect and say nothing hold no more than their share:
// past it the oldest is closed, and a member still connects.
void idleStrangersDoNotLockOutMembers(void**) {
  StoreServer server(kHost, 0, kSecret, StoreLimits{.maxUnproven = 8, .maxUnprovenPerPeer = 4});
  std::vector<std::unique_ptr<Stranger>> strangers;
  for (int i = 0; i < 30; ++i) strangers.push_back(std::make_unique<Stranger>(server.port()));
  StoreClient member(kHost, server.port(), kSecret, soon());
  member.set("k", "v", soon());
  assert_string_equal(member.get("k", soon()).c_str(), "v");
  // Every stranger came before the member, so the server has seen them all.
  awaitUsage(server, [](const StoreUsage& u) { return u.unproven <= 4 && u.clients <= 5; });
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(setThenGetReturnsExactBytes),
      cmocka_unit_test(getBlocksUntilAnotherClientSets),
      cmocka_unit_test(waitReturnsOnlyWhenEveryKeyExists),
      cmocka_unit_test(addIsAtomicAcrossClients),
      cmocka_unit_test(addRejectsANonIntegerValue),
      cmocka_unit_test(addBlocksAGetWaitingOnItsKey),
      cmocka_unit_test(setIfAbsentGivesEveryClientTheFirstValue),
      cmocka_unit_test(checkDoesNotWait),
      cmocka_unit_test(getTimeoutNamesKeyAndServerThenRecovers),
      cmocka_unit_test(waitTimeoutNamesTheKeys),
      cmocka_unit_test(connectToADeadPortTimesOut),
      cmocka_unit_test(connectRetriesUntilTheServerStarts),
      cmocka_unit_test(listeningOnABusyPortFails),
      cmocka_unit_test(clientLeavingWhileParkedDoesNotDisturbTheServer),
      cmocka_unit_test(shutdownWithClientsConnectedIsPrompt),
      cmocka_unit_test(aStrangerReadsAndWritesNothing),
      cmocka_unit_test(aClientWithAnotherSecretIsRefused),
      cmocka_unit_test(aStoreWithoutTheSecretIsNotTrusted),
      cmocka_unit_test(aKeyOrValueOverTheLimitIsRefusedAndTheClientDropped),
      cmocka_unit_test(theBytesHeldAreBounded),
      cmocka_unit_test(aClientThatDoesNotReadIsNotReadFrom),
      cmocka_unit_test(parkedWaitsAreFreedWhenTheirClientGoes),
      cmocka_unit_test(parkedWaitsAreBoundedPerClient),
      cmocka_unit_test(idleStrangersDoNotLockOutMembers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
