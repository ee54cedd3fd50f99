// Which objects of one kind are alive, so that a destroyed or foreign
// pointer is reported (INVALID_USAGE) instead of being dereferenced.
#pragma once

#include <mutex>
#include <unordered_set>

#include "core/error.h"

namespace comm::api {

template <typename T>
class LiveSet {
 public:
  void add(const T* object) {
    std::lock_guard lock(mutex_);
    objects_.insert(object);
  }
  // False when `object` was not alive (destroyed twice, or never created).
  bool remove(const T* object) {
    std::lock_guard lock(mutex_);
    return objects_.erase(object) == 1;
  }
  // Throws when `object` is NULL or not alive; `kind` and `name` name it.
  void check(const T* object, const char* kind, const char* name) {
    if (object == nullptr) fail(COMM_ERR_INVALID_ARGUMENT, "{} is NULL", name);
    std::lock_guard lock(mutex_);
    if (objects_.count(object) == 0) {
      fail(COMM_ERR_INVALID_USAGE, "{} {} was destroyed or never created", kind, static_cast<const void*>(object));
    }
  }

 private:
  std::mutex mutex_;
  std::unordered_set<const T*> objects_;
};

}  // namespace comm::api
