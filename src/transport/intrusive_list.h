// A list linked through its elements' own prev/next members: O(1) removal
// from the middle (a cancel, a match out of posting order) and no
// allocation of its own. The transports that keep their own records (shm/,
// tcp/) and the matching engine (matching_engine.h) hold them in these.
#pragma once

namespace comm::transport {

// T has members `T* prev` and `T* next`; an element is in one list at a time.
template <typename T>
class IntrusiveList {
 public:
  bool empty() const { return head_ == nullptr; }
  T* front() const { return head_; }
  void pushBack(T* item) {
    item->next = nullptr;
    item->prev = tail_;
    (tail_ == nullptr ? head_ : tail_->next) = item;
    tail_ = item;
  }
  void remove(T* item) {
    (item->prev == nullptr ? head_ : item->prev->next) = item->next;
    (item->next == nullptr ? tail_ : item->next->prev) = item->prev;
    item->prev = item->next = nullptr;
  }
  // The first element `match` accepts, in list order, or nullptr.
  template <typename Match>
  T* find(Match&& match) const {
    for (T* item = head_; item != nullptr; item = item->next) {
      if (match(*item)) return item;
    }
    return nullptr;
  }
  // Takes every element `take` accepts off the list, in list order, and
  // hands each to `taken` once it is off (which may then reuse it).
  template <typename Take, typename Taken>
  void removeIf(Take&& take, Taken&& taken) {
    for (T* item = head_; item != nullptr;) {
      T* next = item->next;
      if (take(*item)) {
        remove(item);
        taken(*item);
      }
      item = next;
    }
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
};

}  // namespace comm::transport
