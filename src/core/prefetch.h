// Cache-line prefetches for lines another core writes (the node board).
//
// GCC drops __builtin_prefetch altogether when its read/write argument is
// not a compile-time constant, and turns a write prefetch into a read one
// unless the whole build targets PREFETCHW; these helpers say which they do.
#pragma once

namespace comm::core {

// Loads the line holding `address` in shared state, ahead of a read.
inline void prefetchForRead(const void* address) { __builtin_prefetch(address, 0, 3); }

namespace detail {
// Whether this CPU has PREFETCHW (prefetch.cc).
extern const bool kHasPrefetchW;
}  // namespace detail

// Takes the line holding `address` exclusive, ahead of a store: the store
// then commits without waiting for the other cores' copies to be
// invalidated, which would hold every later store in the store buffer.
inline void prefetchForWrite(void* address) {
#if defined(__x86_64__) || defined(__i386__)
  if (detail::kHasPrefetchW) {
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(address)));
    return;
  }
#endif
  __builtin_prefetch(address, 1, 3);
}

}  // namespace comm::core
