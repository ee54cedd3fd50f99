#include "core/prefetch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace comm::core::detail {
namespace {

// PREFETCHW (AMD since K8, Intel since Broadwell) is CPUID 0x80000001 ECX
// bit 8; older Intel cores fault on it.
bool hasPrefetchW() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 8)) != 0;
#else
  return false;
#endif
}

}  // namespace

const bool kHasPrefetchW = hasPrefetchW();

}  // namespace comm::core::detail
