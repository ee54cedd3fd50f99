// Whether a process of this pid namespace has ended.
#pragma once

#include <sys/types.h>

namespace comm {

// Gone, or a zombie its parent has not reaped yet: either way it will never
// again read or write shared memory.
bool processExited(pid_t pid);

}  // namespace comm
