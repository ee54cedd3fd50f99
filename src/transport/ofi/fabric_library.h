// libfabric, loaded when the first transport over it is made rather than
// with libcomm. Loading it costs every process that links it a fraction of
// a second before main: libfabric links the PSM provider's libinfinipath,
// whose constructor calibrates a clock with hundreds of short sleeps. Jobs
// on one node (shared memory) and jobs over comm's own tcp never need it,
// and a machine without libfabric can still run them.
//
// Only the functions libfabric exports are called through here; the rest of
// its API is inline code that calls through the objects these return.
#pragma once

#include <rdma/fabric.h>

namespace comm::transport {

struct FabricLibrary {
  decltype(&::fi_getinfo) getinfo;
  decltype(&::fi_freeinfo) freeinfo;
  decltype(&::fi_dupinfo) dupinfo;
  decltype(&::fi_fabric) fabric;
  decltype(&::fi_strerror) strerror;
  decltype(&::fi_version) version;
};

// The loaded library (libfabric.so.1), loaded on the first call. Throws
// comm::Error (COMM_ERR_NOT_SUPPORTED) saying why it cannot be loaded, or
// which function it lacks, on every call then.
const FabricLibrary& fabricLibrary();

// fi_strerror(code) once the library is loaded (it always is where a
// libfabric call has returned `code`).
const char* fabricError(int code);

}  // namespace comm::transport
