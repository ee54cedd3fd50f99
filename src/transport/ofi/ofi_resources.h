// RAII owners for libfabric objects: every fid is closed exactly once, in the
// reverse order of its creation when declared as members in creation order.
#pragma once

#include <memory>
#include <utility>

#include <rdma/fabric.h>

#include "transport/ofi/fabric_library.h"

namespace comm::transport {

// The libfabric API version whose semantics this transport is written against
// (Debian 12 ships 1.17; newer libraries honour the older contract).
inline constexpr uint32_t kOfiApiVersion = FI_VERSION(1, 17);

struct OfiInfoDeleter {
  // Only what the loaded library made exists to be freed.
  void operator()(fi_info* info) const noexcept { fabricLibrary().freeinfo(info); }
};
// fi_getinfo / fi_dupinfo results.
using OfiInfo = std::unique_ptr<fi_info, OfiInfoDeleter>;

// Owns one fid_* object (fid_fabric, fid_domain, fid_cq, fid_av, fid_ep,
// fid_mr...): all of them start with `struct fid fid`, which fi_close takes.
template <typename T>
class OfiObject {
 public:
  OfiObject() = default;
  explicit OfiObject(T* object) noexcept : object_(object) {}
  OfiObject(OfiObject&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  OfiObject& operator=(OfiObject&& other) noexcept {
    if (this != &other) {
      close();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  OfiObject(const OfiObject&) = delete;
  OfiObject& operator=(const OfiObject&) = delete;
  ~OfiObject() { close(); }

  T* get() const noexcept { return object_; }
  // For the fi_* open calls that write the new object through a T**.
  T** out() noexcept {
    close();
    return &object_;
  }

 private:
  void close() noexcept {
    // A failing close leaves nothing the caller could do; the object is gone
    // from our side either way.
    if (object_ != nullptr) fi_close(&object_->fid);
    object_ = nullptr;
  }

  T* object_ = nullptr;
};

}  // namespace comm::transport
