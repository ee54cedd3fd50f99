// Which objects of one kind are alive, so that a destroyed or foreign
// pointer is reported (INVALID_USAGE) instead of being dereferenced.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "common/error.h"

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
    removals_.fetch_add(1, std::memory_order_release);
    return objects_.erase(object) == 1;
  }
  // Throws when `object` is NULL or not alive; `kind` and `name` name it.
  void check(const T* object, const char* kind, const char* name) {
    if (object == nullptr) fail(COMM_ERR_INVALID_ARGUMENT, "{} is NULL", name);
    // A thread that found `object` alive, with no object of this kind
    // destroyed since, knows it is still alive without the lock: a
    // collective's every call checks its communicator and two tensors, and
    // the lock and the lookup cost more than a small collective on the node
    // board.
    thread_local Seen seen;
    const uint64_t removals = removals_.load(std::memory_order_acquire);
    if (removals == seen.removals && std::find(seen.objects, seen.objects + kSeen, object) != seen.objects + kSeen) {
      return;
    }
    std::lock_guard lock(mutex_);
    if (objects_.count(object) == 0) {
      fail(COMM_ERR_INVALID_USAGE, "{} ({} {}) was destroyed or never created", name, kind,
           static_cast<const void*>(object));
    }
    if (removals != seen.removals) seen = Seen{.removals = removals};
    seen.objects[seen.next++ % kSeen] = object;
  }

 private:
  // The objects one thread found alive most recently.
  static constexpr size_t kSeen = 4;
  struct Seen {
    const T* objects[kSeen] = {};
    uint64_t removals = 0;
    size_t next = 0;
  };

  std::mutex mutex_;
  std::unordered_set<const T*> objects_;
  std::atomic<uint64_t> removals_{0};  // how many remove() calls began
};

}  // namespace comm::api
