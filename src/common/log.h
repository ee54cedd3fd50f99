// Logging: COMM_LOG_LEVEL (error, warn, info, debug, trace; default warn) and
// COMM_LOG_FILE (default stderr). Every line carries the rank once known.
#pragma once

#include <atomic>
#include <string_view>

#include <fmt/format.h>

namespace comm::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

// Configure from settings; called by comm_init before anything is logged.
// Until then the level comes from the COMM_LOG_LEVEL environment variable.
void configure(std::string_view level, std::string_view file);
// Parse a level name; throws comm::Error (INVALID_ARGUMENT) naming the value.
Level parseLevel(std::string_view name);
void setRank(int rank);
namespace detail {
// The level in force, or kUnread before anything looked.
inline constexpr int kUnread = -1;
extern std::atomic<int> gLevel;
// Reads COMM_LOG_LEVEL into gLevel (once) and returns the level in force.
int readLevel();
}  // namespace detail

// Inline: hot paths (every collective's algorithm choice) ask it.
inline bool enabled(Level level) {
  int current = detail::gLevel.load(std::memory_order_relaxed);
  if (current == detail::kUnread) current = detail::readLevel();
  return static_cast<int>(level) <= current;
}
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kError, f, std::forward<Args>(a)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kWarn, f, std::forward<Args>(a)...);
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kInfo, f, std::forward<Args>(a)...);
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kDebug, f, std::forward<Args>(a)...);
}
template <typename... Args>
void trace(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::kTrace, f, std::forward<Args>(a)...);
}

}  // namespace comm::log
