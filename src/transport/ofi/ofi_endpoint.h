// One libfabric provider's reliable-datagram endpoint with its fabric, domain,
// completion queue and address table. Not thread-safe: the owner serialises
// every call (the domain is opened with FI_THREAD_DOMAIN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>

#include "transport/ofi/ofi_resources.h"

namespace comm::transport {

struct EndpointConfig {
  std::string provider;  // fi_info prov_name hint: "shm", "tcp;ofi_rxm"...
  std::string node;      // address to bind to ("127.0.0.1"), or "" for the provider's choice
  std::string domain;    // domain (network interface for tcp) to use, or ""
};

class OfiEndpoint {
 public:
  // Opens everything; throws comm::Error (COMM_ERR_TRANSPORT) naming the
  // provider and the failing call, or COMM_ERR_NOT_SUPPORTED when the provider
  // cannot give what the transport relies on (64-bit tags, no local memory
  // registration, ordered tagged messages with directed receives).
  explicit OfiEndpoint(const EndpointConfig& config);

  // The provider as libfabric names it ("shm", "tcp;ofi_rxm").
  const std::string& provider() const { return provider_; }
  // The raw endpoint name (fi_getname) peers insert into their tables.
  const std::vector<uint8_t>& address() const { return address_; }
  size_t maxMessageSize() const { return maxMessageSize_; }

  // Adds a peer's raw name to the address table; throws naming `rank`.
  fi_addr_t insert(const std::vector<uint8_t>& address, int rank);

  ssize_t postSend(const void* buffer, size_t length, fi_addr_t destination, uint64_t tag, void* context) noexcept {
    return fi_tsend(ep_.get(), buffer, length, nullptr, destination, tag, context);
  }
  ssize_t postRecv(void* buffer, size_t length, fi_addr_t source, uint64_t tag, void* context) noexcept {
    return fi_trecv(ep_.get(), buffer, length, nullptr, source, tag, 0, context);
  }
  // 0 when the operation will complete with FI_ECANCELED (or has completed).
  int cancel(void* context) noexcept { return static_cast<int>(fi_cancel(&ep_.get()->fid, context)); }

  // fi_cq_read: the number of entries, -FI_EAGAIN when empty, -FI_EAVAIL when
  // an error completion is next (fetch it with readError).
  ssize_t readCompletions(fi_cq_tagged_entry* entries, size_t count) noexcept {
    return fi_cq_read(cq_.get(), entries, count);
  }
  // Fetches the next error completion; false when there is none.
  bool readError(fi_cq_err_entry& entry);
  // The provider's words for an error completion (valid until the next read).
  std::string describe(const fi_cq_err_entry& entry) const;

 private:
  OfiInfo getInfo(const EndpointConfig& config) const;

  OfiInfo info_;
  OfiObject<fid_fabric> fabric_;
  OfiObject<fid_domain> domain_;
  OfiObject<fid_cq> cq_;
  OfiObject<fid_av> av_;
  OfiObject<fid_ep> ep_;
  std::string provider_;
  std::vector<uint8_t> address_;
  size_t maxMessageSize_ = 0;
};

}  // namespace comm::transport
