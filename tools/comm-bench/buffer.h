// A page-aligned heap buffer whose pages are touched once when it is made,
// so that no timed iteration pays for first-touch page faults (on a virtual
// machine they can cost more than the collective being timed).
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace commbench {

class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) {
    constexpr size_t kPage = 4096;
    size_t rounded = (bytes + kPage - 1) / kPage * kPage + kPage;
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, rounded)));
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, rounded);
  }

  std::byte* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> data_;
};

}  // namespace commbench
