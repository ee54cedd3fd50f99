#include "cuda/ipc_handle.h"

#include <cinttypes>
#include <cstdio>

#include "bootstrap/store.h"
#include "common/error.h"

namespace comm::cuda {

namespace {

constexpr const char* kTag = "cuda-ipc/1";

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string encode(const IpcHandle& h) {
  std::string text = fmt::format("{} {} {} {} {} ", kTag, h.device, h.pid, h.offset, h.bytes);
  for (uint8_t byte : h.handle) text += fmt::format("{:02x}", byte);
  return text;
}

IpcHandle decode(const std::string& text, const std::string& from) {
  auto bad = [&](const char* why) -> IpcHandle {
    fail(COMM_ERR_MISMATCH, "the CUDA IPC handle from {} is not one comm {} can read ({}): \"{}\"", from,
         comm_version_string(), why, text.substr(0, 64));
  };
  IpcHandle h;
  char tag[16] = {};
  char hex[2 * IpcHandle::kHandleBytes + 2] = {};
  int consumed = 0;
  int fields = std::sscanf(text.c_str(), "%15s %" SCNd32 " %" SCNd32 " %" SCNu64 " %" SCNu64 " %129s%n", tag, &h.device,
                           &h.pid, &h.offset, &h.bytes, hex, &consumed);
  if (fields != 6 || std::string(tag) != kTag) return bad("no cuda-ipc/1 record");
  if (static_cast<size_t>(consumed) != text.size()) return bad("text after the handle");
  if (std::string(hex).size() != 2 * IpcHandle::kHandleBytes) return bad("the handle is not 64 bytes");
  for (size_t i = 0; i < IpcHandle::kHandleBytes; ++i) {
    int high = hexValue(hex[2 * i]), low = hexValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) return bad("the handle is not lower-case hex");
    h.handle[i] = static_cast<uint8_t>(high << 4 | low);
  }
  if (h.device < 0 || h.pid <= 0) return bad("a negative device or pid");
  return h;
}

std::vector<IpcHandle> exchangeIpcHandles(bootstrap::StoreClient& store, const std::string& prefix, int rank, int size,
                                          const IpcHandle& mine, Deadline deadline) {
  store.set(fmt::format("{}/{}", prefix, rank), encode(mine), deadline);
  std::vector<IpcHandle> all(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    all[r] = r == rank ? mine : decode(store.get(fmt::format("{}/{}", prefix, r), deadline), fmt::format("rank {}", r));
  }
  return all;
}

}  // namespace comm::cuda
