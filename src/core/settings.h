// Every tunable, declared once: key, default, help. Values come from a
// comm_config_t (explicit), else the COMM_<KEY> environment variable, else the
// default. Read once at init; nothing in the data path calls getenv.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace comm {

struct SettingSpec {
  const char* key;           // lower case; the variable is COMM_ + upper case
  const char* defaultValue;  // "" = none
  const char* help;
  bool secret = false;  // its value is never printed or logged
};

std::span<const SettingSpec> settingSpecs();
bool isSettingKey(std::string_view key);
std::string environmentName(std::string_view key);  // "timeout" -> "COMM_TIMEOUT"

class Settings {
 public:
  // `explicitValues` (from comm_config_t) win over the environment.
  static Settings load(const std::map<std::string, std::string>& explicitValues);

  // The value set explicitly or in the environment, if any.
  std::optional<std::string> find(std::string_view key) const;
  // find() or the default.
  std::string get(std::string_view key) const;
  // get() as an integer; throws INVALID_ARGUMENT naming the variable.
  int64_t getInt(std::string_view key) const;
  // get() as a switch, "1" or "0"; throws INVALID_ARGUMENT naming the variable.
  bool getSwitch(std::string_view key) const;
  // "set by config", "set by environment (COMM_X)" or "default".
  std::string source(std::string_view key) const;

 private:
  struct Entry {
    std::string value;
    std::string source;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace comm

// The body of the public opaque comm_config_t.
struct comm_config {
  std::map<std::string, std::string> values;
};
