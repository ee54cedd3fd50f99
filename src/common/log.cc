#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/error.h"

namespace comm::log {
namespace {

constexpr const char* kLevelNames[] = {"error", "warn", "info", "debug", "trace"};

struct Sink {
  std::mutex mutex;
  FILE* file = stderr;
  bool ownsFile = false;
};

Sink& sink() {
  static Sink instance;
  return instance;
}

Level levelFromEnvironment() {
  const char* value = std::getenv("COMM_LOG_LEVEL");
  if (value == nullptr) return Level::kWarn;
  try {
    return parseLevel(value);
  } catch (const Error&) {
    return Level::kWarn;
  }
}

std::atomic<int> gRank{-1};

}  // namespace

namespace detail {

constinit std::atomic<int> gLevel{kUnread};

int readLevel() {
  int expected = kUnread;
  gLevel.compare_exchange_strong(expected, static_cast<int>(levelFromEnvironment()));
  return gLevel.load();
}

}  // namespace detail

Level parseLevel(std::string_view name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kLevelNames[i]) return static_cast<Level>(i);
  }
  fail(COMM_ERR_INVALID_ARGUMENT, "log level '{}' is not one of error, warn, info, debug, trace", name);
}

void configure(std::string_view level, std::string_view file) {
  detail::gLevel.store(static_cast<int>(parseLevel(level)));
  Sink& s = sink();
  std::lock_guard lock(s.mutex);
  if (s.ownsFile) {
    std::fclose(s.file);
    s.file = stderr;
    s.ownsFile = false;
  }
  if (!file.empty() && file != "stderr") {
    std::string path(file);
    // %r in the path becomes the rank, so each rank can write its own file.
    if (auto at = path.find("%r"); at != std::string::npos) {
      path.replace(at, 2, std::to_string(gRank.load()));
    }
    FILE* opened = std::fopen(path.c_str(), "a");
    if (opened == nullptr) fail(COMM_ERR_INVALID_ARGUMENT, "cannot open log file '{}'", path);
    s.file = opened;
    s.ownsFile = true;
  }
}

void setRank(int rank) { gRank.store(rank); }

void write(Level level, std::string_view message) {
  Sink& s = sink();
  std::lock_guard lock(s.mutex);
  int rank = gRank.load();
  if (rank >= 0) {
    fmt::print(s.file, "comm[{}] {} rank {}: {}\n", getpid(), kLevelNames[static_cast<int>(level)], rank, message);
  } else {
    fmt::print(s.file, "comm[{}] {}: {}\n", getpid(), kLevelNames[static_cast<int>(level)], message);
  }
  std::fflush(s.file);
}

}  // namespace comm::log
