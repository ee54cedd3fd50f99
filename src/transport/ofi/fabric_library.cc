#include "transport/ofi/fabric_library.h"

#include <dlfcn.h>

#include <string>
#include <variant>

#include "common/error.h"
#include "transport/crash_signals.h"

namespace comm::transport {
namespace {

constexpr const char* kLibrary = "libfabric.so.1";

template <typename Function>
void resolve(void* handle, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr) fail(COMM_ERR_NOT_SUPPORTED, "{} has no function {}: {}", kLibrary, name, dlerror());
}

// The library, or why it could not be loaded: a failure is not retried, so
// every caller gets the same answer.
std::variant<FabricLibrary, Error> load() {
  try {
    // libinfinipath (which libfabric loads) reads IPATH_NO_BACKTRACE in its
    // constructor; the handlers it installs anyway are taken back after.
    keepCrashesVisible();
    // RTLD_LOCAL: its symbols stay out of the way of a program's own libfabric.
    void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      fail(COMM_ERR_NOT_SUPPORTED, "cannot load {} (libfabric, needed for COMM_PROVIDER's transport): {}", kLibrary,
           dlerror());
    }
    keepCrashesVisible();
    FabricLibrary library{};
    resolve(handle, "fi_getinfo", library.getinfo);
    resolve(handle, "fi_freeinfo", library.freeinfo);
    resolve(handle, "fi_dupinfo", library.dupinfo);
    resolve(handle, "fi_fabric", library.fabric);
    resolve(handle, "fi_strerror", library.strerror);
    resolve(handle, "fi_version", library.version);
    return library;
  } catch (const Error& error) {
    return error;
  }
}

}  // namespace

const FabricLibrary& fabricLibrary() {
  static const std::variant<FabricLibrary, Error> loaded = load();
  if (const Error* error = std::get_if<Error>(&loaded)) throw *error;
  return std::get<FabricLibrary>(loaded);
}

const char* fabricError(int code) { return fabricLibrary().strerror(code); }

}  // namespace comm::transport
