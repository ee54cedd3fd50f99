// One call's device buffers, seen by comm's host algorithms as host memory:
// inputs are copied from the device into pinned host memory before the
// algorithm runs, outputs back after it, by the copy engines. Ordered on the caller's CUDA stream when it gives one:
// the copies start after the work already on the stream, and later work on
// the stream waits (cuda/stream_gate.h) until the outputs are back; no host
// thread blocks on the stream for that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/deadline.h"
#include "cuda/staging_layout.h"

namespace comm::cuda {

class StreamGate;
struct StagingResources;

class Staging {
 public:
  enum Use : uint8_t { kIn = 1, kOut = 2 };

  // Buffers of device `device`.
  explicit Staging(int device);
  // Opens the gate if toDevice() did not: a failed collective must not hold
  // the caller's stream for ever (its outputs are then undefined).
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // A device buffer the call reads (kIn), writes (kOut) or both. Buffers
  // may overlap (in place, or a rank's block inside the output): they then
  // share host memory as they share device memory. Before prepare().
  void add(const void* data, size_t bytes, uint8_t use);
  // Host memory for every buffer; after the last add().
  void prepare();
  // The host address that stands for `data`, the start of a buffer added
  // or an address inside one; null stays null. After prepare().
  void* host(const void* data) const;
  // On the caller's thread, when the call is issued, in issue order: marks
  // the point on `stream` (the caller's cudaStream_t; null for calls that
  // are not stream-ordered, which follow the legacy default stream and
  // whose result is there when they return or their handle completes)
  // after which the copies start, and closes `gate` on `stream` so that
  // later work there waits for toDevice(). Never waits for the device.
  void enqueue(void* stream, StreamGate* gate);

  // Before the algorithm: copy the inputs to host memory, once the stream's
  // earlier work is done. Waits (polling, never blocking the stream) until
  // `deadline`: COMM_ERR_TIMEOUT names what was awaited.
  void toHost(Deadline deadline);
  // After the algorithm: copy the outputs back to the device, wait until
  // they are there, and open the gate.
  void toDevice(Deadline deadline);

  // For a call staged in parts (algo/device/staged_segments.h), instead of
  // toHost and toDevice, which copy whole buffers this way. startToHost
  // starts copying `bytes` at `data` (inside a buffer added) into its host
  // memory, once the stream's earlier work is done, and returns at once;
  // awaitToHost waits (polling) until every part started in is there.
  void startToHost(const void* data, size_t bytes);
  void awaitToHost(Deadline deadline);
  // Starts copying the host memory standing for `bytes` at `data` back to
  // the device, on a stream of its own (the copy engines move both ways at
  // once), behind the parts started back before; returns at once.
  void startToDevice(void* data, size_t bytes);
  // Waits until every part started back is on the device; opens the gate.
  void finishToDevice(Deadline deadline);

  // For a call that works on the device itself rather than on staged host
  // memory (algo/device/ipc_all_reduce.h): comm's stream for the call,
  // which starts after the caller's earlier work; copies on it; a wait,
  // polling, until the device has done what was enqueued on it (`what`
  // names it in a timeout); and the end, which opens the gate.
  void* deviceStream();
  void copyOnDevice(void* to, const void* from, size_t bytes);
  void awaitDevice(Deadline deadline, const char* what);
  void finishOnDevice() { openGate(); }

 private:
  void openGate();
  char* hostBase() const;
  // The stream that copies parts back, once it waits for the caller's
  // earlier work (which may still read the outputs).
  void* backStream();

  int device_;
  StreamGate* gate_ = nullptr;
  uint64_t ticket_ = 0;  // 0 = the gate is not closed by this call
  StagingLayout layout_;
  StagingResources* resources_ = nullptr;  // one call's at a time; back to the pool when done
  bool started_ = false;                   // resources_->stream waits for the caller's earlier work
  bool backStarted_ = false;               // resources_->back does
  void* start_ = nullptr;                  // cudaEvent_t: the stream's earlier work is done
};

}  // namespace comm::cuda
