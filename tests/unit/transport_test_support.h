// What the transport tests (transport_conformance_test, shm_transport_test,
// ofi_transport_test) share: a CHECK that throws inside a forked rank, waits
// that progress a transport by hand, and byte patterns that name their offset
// and seed.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/deadline.h"
#include "transport/transport.h"

namespace transport_test {

using namespace std::chrono_literals;
using Bytes = std::vector<uint8_t>;

inline constexpr size_t kMiB = size_t{1} << 20;

#define CHECK(condition, ...)                                                                                     \
  do {                                                                                                            \
    if (!(condition)) {                                                                                           \
      throw std::runtime_error(                                                                                   \
          fmt::format("{}:{}: check `{}` failed: {}", __FILE__, __LINE__, #condition, fmt::format(__VA_ARGS__))); \
    }                                                                                                             \
  } while (0)

// How long a test waits for one request before it calls the transfer stuck.
// Generous on purpose: on a machine whose cores other work keeps busy, a
// rank gets a small share of a core and a 2 GiB transfer takes minutes, yet
// it is moving. A wait that ends is fine at any speed; tests assert no time.
inline constexpr std::chrono::milliseconds kPatience = 300s;
// How long a test's ranks may run before they are killed: longer than one
// stuck wait, shorter than CTest's deadline for the case (tests/CMakeLists.txt),
// so a hang is reported by the rank that saw it.
inline constexpr std::chrono::seconds kRanksPatience = 540s;

// Loops progress() until the request is done, sleeping between idle polls so
// an idle wait does not spin a core. A request still not done at the
// deadline fails the test, naming the line that waited for it (as a
// default argument __builtin_LINE() is the caller's; clang 14, which builds
// the sanitizer checks, has no std::source_location).
inline void waitFor(comm::transport::Transport& transport, const comm::transport::Request& request,
                    std::chrono::milliseconds timeout = kPatience, int callerLine = __builtin_LINE()) {
  comm::Deadline deadline(timeout);
  int idle = 0;
  while (!request.done.load(std::memory_order_acquire)) {
    if (transport.progress()) {
      idle = 0;
      continue;
    }
    CHECK(!deadline.expired(), "the request waited for at line {} is not done after {} s", callerLine,
          std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
    if (++idle > 64) std::this_thread::sleep_for(50us);
  }
}

inline void waitOk(comm::transport::Transport& transport, const comm::transport::Request& request,
                   std::chrono::milliseconds timeout = kPatience, int callerLine = __builtin_LINE()) {
  waitFor(transport, request, timeout, callerLine);
  CHECK(request.status == COMM_OK, "line {}: status {}: {}", callerLine, static_cast<int>(request.status),
        request.error);
}

// Distinct bytes for every (offset, seed), generated a word at a time so
// 64 MiB buffers cost little to fill and check.
inline uint64_t patternWord(size_t word, uint64_t seed) {
  uint64_t x = word * 0x9E3779B97F4A7C15ULL + seed * 0xD1B54A32D192ED03ULL + 1;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline uint8_t patternByte(size_t index, uint64_t seed) {
  return static_cast<uint8_t>(patternWord(index / 8, seed) >> (index % 8 * 8));
}

inline Bytes pattern(size_t size, uint64_t seed) {
  Bytes data(size);
  for (size_t w = 0; w < size / 8; ++w) {
    uint64_t value = patternWord(w, seed);
    std::memcpy(&data[w * 8], &value, 8);
  }
  for (size_t i = size / 8 * 8; i < size; ++i) data[i] = patternByte(i, seed);
  return data;
}

inline void checkPattern(const Bytes& data, size_t size, uint64_t seed) {
  CHECK(data.size() >= size, "buffer of {} bytes", data.size());
  Bytes expected = pattern(size, seed);
  if (size == 0 || std::memcmp(data.data(), expected.data(), size) == 0) return;
  size_t i = std::mismatch(expected.begin(), expected.end(), data.begin()).first - expected.begin();
  CHECK(false, "byte {} of {} (seed {}) is {}, expected {}", i, size, seed, data[i], expected[i]);
}

}  // namespace transport_test
