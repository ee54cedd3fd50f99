// This machine's host name, as gethostname gives it ("" when it cannot).
#pragma once

#include <unistd.h>

#include <string>

namespace comm {

inline std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace comm
