// The CUDA part in a build without it (nvcc was not found, or
// COMM_WITH_CUDA=OFF): no device is visible, every host pointer is host
// memory, and anything that would touch a device says it is not built.
// comm_tensor_set_memory refuses CUDA memory first, so the engine never gets
// further than deviceCount() and checkDevice() here.
#include "common/error.h"
#include "cuda/device.h"
#include "cuda/ipc_workspace.h"
#include "cuda/reduce_kernels.h"
#include "cuda/staging.h"
#include "cuda/stream_gate.h"

namespace comm::cuda {

namespace {

[[noreturn]] void notBuilt(const char* what) {
  fail(COMM_ERR_NOT_SUPPORTED,
       "{}: this build of comm has no CUDA (it was configured without nvcc, or with COMM_WITH_CUDA=OFF)", what);
}

}  // namespace

bool built() { return false; }

const DeviceCount& deviceCount() {
  static const DeviceCount none{0, "this build of comm has no CUDA"};
  return none;
}

void checkDevice(int device, const char* call) {
  fail(COMM_ERR_NOT_SUPPORTED, "{}: CUDA memory (device {}) needs a build of comm with CUDA, and this one has none",
       call, device);
}

void checkDeviceBuffer(const void*, size_t, int, const char* name) { notBuilt(name); }

void checkHostBuffer(const void*, const char*) {}

int streamDevice(void*) { notBuilt("a CUDA stream"); }

DeviceScope::DeviceScope(int) { notBuilt("a CUDA device"); }

DeviceScope::~DeviceScope() = default;

StreamGate::StreamGate() { notBuilt("a CUDA stream gate"); }

uint64_t StreamGate::close(void*) { notBuilt("a CUDA stream gate"); }

void StreamGate::open(uint64_t) {}

Staging::Staging(int) { notBuilt("CUDA staging"); }

Staging::~Staging() = default;

void Staging::add(const void*, size_t, uint8_t) {}

void Staging::prepare() {}

void Staging::enqueue(void*, StreamGate*) {}

void* Staging::host(const void*) const { notBuilt("CUDA staging"); }

void Staging::toHost(Deadline) {}

void Staging::toDevice(Deadline) {}

void Staging::startToHost(const void*, size_t) { notBuilt("CUDA staging"); }

void Staging::awaitToHost(Deadline) {}

void Staging::startToDevice(void*, size_t) { notBuilt("CUDA staging"); }

void Staging::finishToDevice(Deadline) {}

void* Staging::deviceStream() { notBuilt("CUDA staging"); }

void Staging::copyOnDevice(void*, const void*, size_t) { notBuilt("CUDA staging"); }

void Staging::awaitDevice(Deadline, const char*) { notBuilt("CUDA staging"); }

void Staging::openGate() {}

DeviceUuid deviceUuid(int) { notBuilt("a CUDA device"); }

bool canReach(int, const DeviceUuid&) { notBuilt("a CUDA device"); }

PeerBuffer::PeerBuffer(const IpcHandle&, int) { notBuilt("a CUDA IPC buffer"); }

PeerBuffer::~PeerBuffer() = default;

IpcWorkspace::~IpcWorkspace() = default;

void IpcWorkspace::prepare(int) { notBuilt("a CUDA IPC workspace"); }

char* IpcWorkspace::peer(int, const IpcHandle&) { notBuilt("a CUDA IPC workspace"); }

void combineOnDevice(void*, const void*, const void*, size_t, comm_dtype_t, comm_op_t, void*) {
  notBuilt("a CUDA reduction");
}

void finishAverageOnDevice(void*, size_t, comm_dtype_t, int, void*) { notBuilt("a CUDA reduction"); }

}  // namespace comm::cuda
