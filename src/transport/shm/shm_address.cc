#include "transport/shm/shm_address.h"

#include <unistd.h>

#include <cstring>

#include "common/error.h"

namespace comm::transport {
namespace {

constexpr uint8_t kAddressVersion = 2;

template <typename T>
void put(std::vector<uint8_t>& blob, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  blob.insert(blob.end(), bytes, bytes + sizeof value);
}

}  // namespace

cpu_set_t affinity() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) {
    for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &cpus);
  }
  return cpus;
}

std::vector<uint8_t> encodeAddress(const ShmAddress& address) {
  std::vector<uint8_t> blob{kAddressVersion};
  put(blob, static_cast<int32_t>(address.pid));
  put(blob, address.nonce);
  put(blob, address.probe);
  put(blob, address.cpus);
  blob.insert(blob.end(), address.segment.begin(), address.segment.end());
  return blob;
}

ShmAddress decodeAddress(const std::vector<uint8_t>& blob, int rank) {
  constexpr size_t kFixed = 1 + sizeof(int32_t) + 2 * sizeof(uint64_t) + sizeof(cpu_set_t);
  if (blob.size() <= kFixed || blob[0] != kAddressVersion) {
    fail(COMM_ERR_TRANSPORT, "shm: rank {}'s address ({} bytes, format {}) is not one this rank understands", rank,
         blob.size(), blob.empty() ? 0 : blob[0]);
  }
  ShmAddress address;
  int32_t pid = 0;
  const uint8_t* at = blob.data() + 1;
  std::memcpy(&pid, at, sizeof pid);
  std::memcpy(&address.nonce, at + sizeof pid, sizeof address.nonce);
  std::memcpy(&address.probe, at + sizeof pid + sizeof address.nonce, sizeof address.probe);
  std::memcpy(&address.cpus, at + sizeof pid + sizeof address.nonce + sizeof address.probe, sizeof address.cpus);
  address.pid = pid;
  address.segment.assign(blob.begin() + kFixed, blob.end());
  return address;
}

}  // namespace comm::transport
