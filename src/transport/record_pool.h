// Records that outlive the call that made them (operations, receives,
// early messages), reused so that steady traffic never allocates.
#pragma once

#include <deque>

namespace comm::transport {

// Elements never move (a deque only appends), so their addresses can serve
// as tokens; released ones are reused before anything new is built. T has a
// member `T* next`, which links the free ones; acquire() hands an element
// back as it was released, the caller sets its fields.
template <typename T>
class RecordPool {
 public:
  T* acquire() {
    if (free_ == nullptr) return &storage_.emplace_back();
    T* item = free_;
    free_ = item->next;
    item->next = nullptr;
    return item;
  }
  void release(T* item) {
    item->prev = nullptr;
    item->next = free_;
    free_ = item;
  }

 private:
  std::deque<T> storage_;
  T* free_ = nullptr;
};

}  // namespace comm::transport
