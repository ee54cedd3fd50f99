// comm_version, comm_version_string and comm_check_version: which comm this
// library is, and whether it can serve a program built against another
// comm.h.
#include "api/guard.h"
#include "comm.h"

using comm::fail;
using comm::api::guard;

extern "C" {

COMM_API unsigned comm_version(void) { return COMM_VERSION_NUMBER; }

COMM_API const char* comm_version_string(void) {
#define COMM_STRINGIFY2(x) #x
#define COMM_STRINGIFY(x) COMM_STRINGIFY2(x)
  return COMM_STRINGIFY(COMM_VERSION_MAJOR) "." COMM_STRINGIFY(COMM_VERSION_MINOR) "." COMM_STRINGIFY(
      COMM_VERSION_PATCH);
}

COMM_API comm_status_t comm_check_version(int major, int minor) {
  return guard("comm_check_version", [&] {
    if (major < 0 || minor < 0) fail(COMM_ERR_INVALID_ARGUMENT, "version {}.{} is negative", major, minor);
    if (major != COMM_VERSION_MAJOR) {
      fail(COMM_ERR_NOT_SUPPORTED,
           "the program was built for comm {}.{}, but the library loaded is {}: another "
           "major version, whose ABI differs",
           major, minor, comm_version_string());
    }
    if (minor > COMM_VERSION_MINOR) {
      fail(COMM_ERR_NOT_SUPPORTED,
           "the program was built for comm {}.{}, but the library loaded is {}, older: "
           "it may lack calls the program makes",
           major, minor, comm_version_string());
    }
  });
}

}  // extern "C"
