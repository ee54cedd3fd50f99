// The in-process transport (provider "threads"): ranks that are threads of
// one process hand each other messages through its memory. Tests run every
// algorithm at many ranks inside one process with it, and under a debugger
// (tests/unit/ranks_as_threads.h); it is also the proof that a transport is
// one folder behind the table in hybrid_transport.cc.
#pragma once

#include <memory>

#include "transport/transport.h"

namespace comm::transport {

// What providerFor() says, and the provider setting that chooses it.
inline constexpr const char* kThreadsProvider = "threads";

// A rank's transport: localAddress() names its mailbox in a process-wide
// registry; connect() finds every peer's there and fails (COMM_ERR_TRANSPORT)
// for a peer in another process.
std::unique_ptr<Transport> createThreadsTransport();

}  // namespace comm::transport
