// Logging: COMM_LOG_LEVEL (error, warn, info, debug, trace; default warn) and
// COMM_LOG_FILE (default stderr). Every line carries the rank once known.
#pragma once

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
bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) { at(Level::kError, f, std::forward<Args>(a)...); }
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) { at(Level::kWarn, f, std::forward<Args>(a)...); }
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) { at(Level::kInfo, f, std::forward<Args>(a)...); }
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) { at(Level::kDebug, f, std::forward<Args>(a)...); }
template <typename... Args>
void trace(fmt::format_string<Args...> f, Args&&... a) { at(Level::kTrace, f, std::forward<Args>(a)...); }

}  // namespace comm::log
