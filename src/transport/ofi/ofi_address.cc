#include "transport/ofi/ofi_address.h"

#include <limits>

#include "common/error.h"

namespace comm::transport {
namespace {

// Bumped whenever the layout changes, so mixed versions fail loudly.
constexpr uint8_t kFormatVersion = 1;

class Reader {
 public:
  Reader(const std::vector<uint8_t>& blob, int rank) : blob_(blob), rank_(rank) {}

  size_t take(size_t bytes) {
    if (blob_.size() - offset_ < bytes) {
      fail(COMM_ERR_TRANSPORT, "fabric: rank {}'s address blob is truncated ({} bytes)", rank_, blob_.size());
    }
    size_t at = offset_;
    offset_ += bytes;
    return at;
  }
  uint8_t byte() { return blob_[take(1)]; }
  uint16_t word() {
    size_t at = take(2);
    return static_cast<uint16_t>(blob_[at] | blob_[at + 1] << 8);
  }
  bool finished() const { return offset_ == blob_.size(); }

 private:
  const std::vector<uint8_t>& blob_;
  int rank_;
  size_t offset_ = 0;
};

}  // namespace

std::vector<uint8_t> encodeAddresses(const std::vector<EndpointAddress>& endpoints) {
  std::vector<uint8_t> blob{kFormatVersion, static_cast<uint8_t>(endpoints.size())};
  for (const EndpointAddress& endpoint : endpoints) {
    if (endpoint.provider.size() > std::numeric_limits<uint8_t>::max() ||
        endpoint.name.size() > std::numeric_limits<uint16_t>::max()) {
      fail(COMM_ERR_INTERNAL, "fabric: {} endpoint name of {} bytes does not fit the address blob", endpoint.provider,
           endpoint.name.size());
    }
    blob.push_back(static_cast<uint8_t>(endpoint.provider.size()));
    blob.insert(blob.end(), endpoint.provider.begin(), endpoint.provider.end());
    blob.push_back(static_cast<uint8_t>(endpoint.name.size() & 0xff));
    blob.push_back(static_cast<uint8_t>(endpoint.name.size() >> 8));
    blob.insert(blob.end(), endpoint.name.begin(), endpoint.name.end());
  }
  return blob;
}

std::vector<EndpointAddress> decodeAddresses(const std::vector<uint8_t>& blob, int rank) {
  Reader reader(blob, rank);
  uint8_t version = reader.byte();
  if (version != kFormatVersion) {
    fail(COMM_ERR_TRANSPORT, "fabric: rank {}'s address blob has format {}, this rank expects {}", rank, version,
         kFormatVersion);
  }
  std::vector<EndpointAddress> endpoints(reader.byte());
  for (EndpointAddress& endpoint : endpoints) {
    size_t length = reader.byte();
    size_t at = reader.take(length);
    endpoint.provider.assign(blob.begin() + at, blob.begin() + at + length);
    length = reader.word();
    at = reader.take(length);
    endpoint.name.assign(blob.begin() + at, blob.begin() + at + length);
  }
  if (!reader.finished()) {
    fail(COMM_ERR_TRANSPORT, "fabric: rank {}'s address blob has {} bytes of trailing data", rank, blob.size());
  }
  return endpoints;
}

}  // namespace comm::transport
