#include "transport/crash_signals.h"

#include <dlfcn.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace comm::transport {
namespace {

constexpr int kCaught[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGINT, SIGTERM};

// Whether `handler` is code of libinfinipath.
bool inInfinipath(void* handler) {
  Dl_info info{};
  return dladdr(handler, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libinfinipath") != nullptr;
}

// The user's choice, as it was when this library was loaded (before
// keepCrashesVisible set it).
const bool userChose = std::getenv("IPATH_NO_BACKTRACE") != nullptr;

}  // namespace

void keepCrashesVisible() {
  if (userChose) return;
  setenv("IPATH_NO_BACKTRACE", "1", 0);
  for (int signal : kCaught) {
    struct sigaction action {};
    if (sigaction(signal, nullptr, &action) != 0) continue;
    void* handler = (action.sa_flags & SA_SIGINFO) != 0 ? reinterpret_cast<void*>(action.sa_sigaction)
                                                        : reinterpret_cast<void*>(action.sa_handler);
    if (handler == reinterpret_cast<void*>(SIG_DFL) || handler == reinterpret_cast<void*>(SIG_IGN)) continue;
    if (!inInfinipath(handler)) continue;
    struct sigaction original {};
    original.sa_handler = SIG_DFL;
    sigemptyset(&original.sa_mask);
    sigaction(signal, &original, nullptr);
  }
}

namespace {

// ELF runs a library's constructors after those of the libraries it needs:
// libinfinipath's have run by now.
[[gnu::constructor]] void keepCrashesVisibleOnLoad() { keepCrashesVisible(); }

}  // namespace

}  // namespace comm::transport
