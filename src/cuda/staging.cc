#include "cuda/staging.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "common/backoff.h"
#include "common/error.h"
#include "common/log.h"
#include "cuda/check.h"
#include "cuda/device.h"
#include "cuda/stream_gate.h"

namespace comm::cuda {

// What one call in flight needs; kept per device and reused, since pinned
// memory, streams and events are slow to make.
struct StagingResources {
  int device = 0;
  cudaStream_t stream = nullptr;  // comm's own, not synchronised with the legacy default stream
  cudaEvent_t start = nullptr;
  cudaEvent_t copied = nullptr;
  cudaStream_t back = nullptr;  // copies parts back while `stream` brings the next ones in
  cudaEvent_t backCopied = nullptr;
  // Pinned: the copy engines move a whole region straight in and out at
  // full speed, and the host algorithms work on it in place. (Pageable
  // memory behind a few pinned chunks cost a CPU copy each way, which took
  // longer than the device copies themselves.)
  void* host = nullptr;
  size_t hostBytes = 0;
};

namespace {

StagingResources* makeResources(int device) {
  auto r = std::make_unique<StagingResources>();
  r->device = device;
  check(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaEventCreateWithFlags(&r->start, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaEventCreateWithFlags(&r->copied, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaStreamCreateWithFlags(&r->back, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaEventCreateWithFlags(&r->backCopied, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return r.release();
}

// Resources are never freed: the process keeps the few it needed at once,
// and freeing pinned memory after the CUDA runtime has shut down at exit
// would fail.
std::mutex poolMutex;
std::map<int, std::vector<StagingResources*>>* idleResources = new std::map<int, std::vector<StagingResources*>>();

StagingResources* acquire(int device) {
  {
    std::lock_guard lock(poolMutex);
    auto& idle = (*idleResources)[device];
    if (!idle.empty()) {
      StagingResources* r = idle.back();
      idle.pop_back();
      return r;
    }
  }
  return makeResources(device);
}

void release(StagingResources* r) {
  std::lock_guard lock(poolMutex);
  (*idleResources)[r->device].push_back(r);
}

// Polls `event` until the device has passed it; the caller's thread, never
// the stream, waits.
void await(cudaEvent_t event, Deadline deadline, const char* what) {
  core::Backoff backoff;
  for (;;) {
    cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) check(state, what);
    if (deadline.expired()) fail(COMM_ERR_TIMEOUT, "{} was not done when the communicator's timeout ran out", what);
    backoff.pause();
  }
}

}  // namespace

Staging::Staging(int device) : device_(device) {}

Staging::~Staging() {
  openGate();
  if (resources_ == nullptr) return;
  // After a failure (a timeout) copies may still be under way into the
  // pinned buffers; the next call must not get them. They are left to the
  // device, and to the process.
  if (cudaStreamQuery(resources_->stream) != cudaSuccess || cudaStreamQuery(resources_->back) != cudaSuccess) {
    cudaGetLastError();
    log::warn("CUDA staging buffers of device {} still in use after a failed call; set aside", device_);
    return;
  }
  release(resources_);
}

void Staging::add(const void* data, size_t bytes, uint8_t use) { layout_.add(data, bytes, use); }

void Staging::prepare() {
  const size_t total = layout_.arrange();
  DeviceScope scope(device_);
  resources_ = acquire(device_);
  const size_t need = std::max<size_t>(total, 1);
  if (resources_->hostBytes < need) {
    // The old buffer first: the two together may not fit. Idle resources
    // have no copy in flight (the destructor sets busy ones aside).
    if (resources_->host != nullptr) check(cudaFreeHost(resources_->host), "cudaFreeHost (a staging buffer)");
    resources_->host = nullptr;
    resources_->hostBytes = 0;
    if (cudaHostAlloc(&resources_->host, need, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      release(resources_);
      resources_ = nullptr;
      fail(COMM_ERR_NO_MEMORY, "cudaHostAlloc of {} bytes of pinned memory to stage device buffers failed", need);
    }
    resources_->hostBytes = need;
  }
}

void Staging::enqueue(void* stream, StreamGate* gate) {
  DeviceScope scope(device_);
  cudaStream_t caller = stream != nullptr ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  check(cudaEventRecord(resources_->start, caller), "cudaEventRecord (after the stream's earlier work)");
  if (stream != nullptr && gate != nullptr) {
    ticket_ = gate->close(stream);
    gate_ = gate;
  }
}

void* Staging::host(const void* data) const {
  if (data == nullptr) return nullptr;
  return hostBase() + layout_.hostOffset(data);
}

char* Staging::hostBase() const { return static_cast<char*>(resources_->host); }

void* Staging::deviceStream() {
  if (!started_) {
    DeviceScope scope(device_);
    check(cudaStreamWaitEvent(resources_->stream, resources_->start, 0), "cudaStreamWaitEvent");
    started_ = true;
  }
  return resources_->stream;
}

void Staging::copyOnDevice(void* to, const void* from, size_t bytes) {
  check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(deviceStream())),
        "cudaMemcpyAsync (device to device)");
}

void Staging::awaitDevice(Deadline deadline, const char* what) {
  check(cudaEventRecord(resources_->copied, static_cast<cudaStream_t>(deviceStream())), "cudaEventRecord");
  await(resources_->copied, deadline, what);
}

void* Staging::backStream() {
  if (!backStarted_) {
    check(cudaStreamWaitEvent(resources_->back, resources_->start, 0), "cudaStreamWaitEvent");
    backStarted_ = true;
  }
  return resources_->back;
}

void Staging::startToHost(const void* data, size_t bytes) {
  DeviceScope scope(device_);
  auto stream = static_cast<cudaStream_t>(deviceStream());
  check(cudaMemcpyAsync(host(data), data, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (staging)");
  check(cudaEventRecord(resources_->copied, stream), "cudaEventRecord (staging)");
}

void Staging::awaitToHost(Deadline deadline) {
  await(resources_->copied, deadline, "the copy of device memory to the host (after the stream's earlier work)");
}

void Staging::startToDevice(void* data, size_t bytes) {
  DeviceScope scope(device_);
  check(cudaMemcpyAsync(data, host(data), bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(backStream())),
        "cudaMemcpyAsync (the result)");
}

void Staging::finishToDevice(Deadline deadline) {
  DeviceScope scope(device_);
  auto back = static_cast<cudaStream_t>(backStream());
  check(cudaEventRecord(resources_->backCopied, back), "cudaEventRecord (the result)");
  await(resources_->backCopied, deadline, "the copy of the result to device memory");
  openGate();
}

// Staged whole: every region the call reads in, every region it writes
// back, the same way as parts.
void Staging::toHost(Deadline deadline) {
  for (const StagingLayout::Region& r : layout_.regions()) {
    if (r.use & kIn) startToHost(r.begin, r.bytes);
  }
  awaitToHost(deadline);
}

void Staging::toDevice(Deadline deadline) {
  for (const StagingLayout::Region& r : layout_.regions()) {
    if (r.use & kOut) startToDevice(const_cast<char*>(r.begin), r.bytes);
  }
  finishToDevice(deadline);
}

void Staging::openGate() {
  if (ticket_ == 0) return;
  gate_->open(ticket_);
  ticket_ = 0;
}

}  // namespace comm::cuda
