// comm_setting_count and comm_setting_info: the settings table
// (core/settings.h) as the public API offers it, for comm-info and the
// bindings.
#include <cstdlib>
#include <span>
#include <string>

#include "api/guard.h"
#include "comm.h"
#include "core/settings.h"

using comm::fail;
using comm::api::guard;
using comm::api::require;

extern "C" {

COMM_API comm_status_t comm_setting_count(int* out) {
  return guard("comm_setting_count", [&] { *require(out, "out") = static_cast<int>(comm::settingSpecs().size()); });
}

COMM_API comm_status_t comm_setting_info(const char** out_key, const char** out_default, const char** out_help,
                                         const char** out_value, int index) {
  for (const char** out : {out_key, out_default, out_help, out_value}) {
    if (out != nullptr) *out = nullptr;
  }
  return guard("comm_setting_info", [&] {
    require(out_key, "out_key");
    const std::span<const comm::SettingSpec> specs = comm::settingSpecs();
    if (index < 0 || static_cast<size_t>(index) >= specs.size()) {
      fail(COMM_ERR_INVALID_ARGUMENT, "index {} is not in 0..{} (comm_setting_count)", index, specs.size() - 1);
    }
    const comm::SettingSpec& spec = specs[index];
    const char* value = std::getenv(comm::environmentName(spec.key).c_str());
    if (out_value != nullptr && value != nullptr) {
      // A copy: the environment may change under a pointer into it.
      thread_local std::string held;
      held = spec.secret ? "(not shown)" : value;
      *out_value = held.c_str();
    }
    *out_key = spec.key;
    if (out_default != nullptr) *out_default = spec.defaultValue;
    if (out_help != nullptr) *out_help = spec.help;
  });
}

}  // extern "C"
