// Crashes stay crashes. libfabric links the PSM provider's libinfinipath,
// whose constructor installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGABRT,
// SIGFPE and SIGINT that write a .btr file into the working directory and
// exit with status 1: a launcher then reports a failure, not a crash, and
// a core dump never happens. It installs nothing when IPATH_NO_BACKTRACE is
// set, but it runs before any code of comm can set it, whenever libcomm is
// loaded with the program; so commrun sets it for its ranks, the Python
// package before it loads libcomm, Java's loader likewise, and for
// everything else keepCrashesVisible() takes those handlers back.
#pragma once

namespace comm::transport {

// Unless the user set IPATH_NO_BACKTRACE: sets it (for processes this one
// starts, and libraries loaded later) and gives every signal whose handler
// lives in libinfinipath back its default action. Runs once when libcomm is
// loaded; idempotent, so comm_init calls it too (static builds).
void keepCrashesVisible();

}  // namespace comm::transport
