// Measures one collective at one size, dtype and op: warm-up, timed
// iterations (each timed on its own; the row shows the median), a checked
// run, and the aggregation over ranks. Every rank runs the same sequence.
#pragma once

#include <memory>
#include <optional>

#include "buffer.h"
#include "collectives.h"
#include "device_buffer.h"
#include "options.h"
#include "result.h"
#include "values.h"

namespace commbench {

class Benchmark {
 public:
  Benchmark(comm_t* world, const Collective& collective, const Options& options);
  // Takes --stream's stream off the communicator before it goes.
  ~Benchmark();
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

  Row measure(size_t bytes, comm_dtype_t dtype, std::optional<comm_op_t> op);

 private:
  std::optional<Measurement> measurePlacement(const Geometry& geometry, const Workload& workload, Placement placement,
                                              int iterations);
  void prepareData(const Views& views, const Geometry& geometry, const Workload& workload);
  int64_t countWrongOutput(const Views& views, const Geometry& geometry, const Workload& workload);
  Measurement aggregate(double medianUs, std::optional<int64_t> wrong);
  // Where comm-bench writes and reads `view`'s data (host memory).
  void* address(const View& view, comm_dtype_t dtype) const;
  // Where the tensor of `view` points: address(), or its device copy.
  void* tensorAddress(const View& view, comm_dtype_t dtype) const;
  // --memory cuda: copies `view` between host and device.
  void upload(const View& view, comm_dtype_t dtype);
  void download(const View& view, comm_dtype_t dtype);

  comm_t* world_;
  const Collective& collective_;
  const Options& options_;
  int rank_ = 0;
  int ranks_ = 1;
  AlignedBuffer send_;
  AlignedBuffer recv_;
  int device_ = -1;  // --memory cuda: the CUDA device of the tensors
  std::unique_ptr<DeviceBuffer> deviceSend_;
  std::unique_ptr<DeviceBuffer> deviceRecv_;
  std::unique_ptr<DeviceStream> stream_;  // --stream
};

}  // namespace commbench
