#include "benchmark.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "api.h"

namespace commbench {
namespace {

Owned<comm_tensor_t> makeTensor(void* data, comm_dtype_t dtype, size_t elements, int device = -1) {
  comm_tensor_t* tensor = nullptr;
  auto shape = static_cast<int64_t>(elements);
  check(comm_tensor_create(&tensor, data, dtype, 1, &shape), "comm_tensor_create");
  Owned<comm_tensor_t> owned(tensor);
  if (device >= 0) check(comm_tensor_set_memory(tensor, COMM_MEMORY_CUDA, device), "comm_tensor_set_memory");
  return owned;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// `values` combined element by element over every rank with `op`.
std::vector<double> allReduce(comm_t* world, std::vector<double> values, comm_op_t op) {
  Owned<comm_tensor_t> tensor = makeTensor(values.data(), COMM_FLOAT64, values.size());
  check(comm_all_reduce(world, tensor.get(), tensor.get(), op, nullptr), "comm_all_reduce (aggregating results)");
  return values;
}

}  // namespace

Benchmark::Benchmark(comm_t* world, const Collective& collective, const Options& options)
    : world_(world),
      collective_(collective),
      options_(options),
      send_(options.sizes.back()),
      recv_(options.sizes.back()) {
  check(comm_rank(&rank_, world), "comm_rank");
  check(comm_size(&ranks_, world), "comm_size");
  if (options.memory == COMM_MEMORY_CUDA) {
    // Ranks of a node share its devices round-robin.
    int devices = 0, local = 0;
    const char* reason = "";
    check(comm_cuda_device_count(&devices, &reason), "comm_cuda_device_count");
    if (devices == 0) throw std::runtime_error(std::string("--memory cuda: no CUDA device visible: ") + reason);
    check(comm_local_rank(&local, world), "comm_local_rank");
    device_ = local % devices;
    deviceSend_ = std::make_unique<DeviceBuffer>(options.sizes.back(), device_);
    deviceRecv_ = std::make_unique<DeviceBuffer>(options.sizes.back(), device_);
    if (options.stream) {
      stream_ = std::make_unique<DeviceStream>(device_);
      check(comm_set_stream(world, stream_->handle()), "comm_set_stream");
    }
  }
}

Benchmark::~Benchmark() {
  if (stream_) comm_set_stream(world_, nullptr);
}

Row Benchmark::measure(size_t bytes, comm_dtype_t dtype, std::optional<comm_op_t> op) {
  size_t elementSize = comm_dtype_size(dtype);
  Geometry geometry{countOf(collective_, bytes, elementSize, ranks_), ranks_, rank_, options_.root};
  Workload workload{dtype, op, ranks_};
  Row row{};
  row.bytes = bytesOf(collective_, geometry.count, elementSize, ranks_);
  row.count = geometry.count;
  row.dtype = dtype;
  row.op = op;
  row.root = collective_.rooted ? options_.root : -1;
  row.iterations = options_.iterations ? *options_.iterations : automaticIterations(row.bytes);
  row.outOfPlace = measurePlacement(geometry, workload, Placement::kOutOfPlace, row.iterations);
  row.inPlace = measurePlacement(geometry, workload, Placement::kInPlace, row.iterations);
  return row;
}

std::optional<Measurement> Benchmark::measurePlacement(const Geometry& geometry, const Workload& workload,
                                                       Placement placement, int iterations) {
  if (placement == Placement::kInPlace && !collective_.hasInPlace) return std::nullopt;
  Views views = collective_.views(geometry, placement);
  Owned<comm_tensor_t> in, out;
  if (views.in) in = makeTensor(tensorAddress(*views.in, workload.dtype), workload.dtype, views.in->elements, device_);
  if (views.out)
    out = makeTensor(tensorAddress(*views.out, workload.dtype), workload.dtype, views.out->elements, device_);
  Owned<comm_batch_t> batch;
  if (collective_.makeBatch != nullptr) {
    comm_batch_t* made = nullptr;
    check(collective_.makeBatch(&made, geometry, in.get(), out.get()), "comm_batch_*");
    batch.reset(made);
  }
  Operands operands{in.get(), out.get(), workload.op.value_or(COMM_OP_SUM), geometry.root, batch.get()};
  auto once = [&] {
    if (!options_.async) {
      check(collective_.start(world_, operands, nullptr), collective_.name.data());
    } else {
      comm_handle_t* started = nullptr;
      check(collective_.start(world_, operands, &started), collective_.name.data());
      Owned<comm_handle_t> handle(started);
      check(comm_handle_wait(handle.get(), COMM_TIMEOUT_DEFAULT), "comm_handle_wait");
    }
    if (stream_) stream_->synchronize();
  };

  prepareData(views, geometry, workload);
  check(comm_barrier(world_, nullptr), "comm_barrier");
  for (int i = 0; i < options_.warmup; ++i) once();
  std::vector<double> timesUs(static_cast<size_t>(iterations));
  for (double& t : timesUs) {
    auto start = std::chrono::steady_clock::now();
    once();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }

  std::optional<int64_t> wrong;
  if (options_.check) {
    // The timed iterations overwrote (in place: accumulated into) the data.
    prepareData(views, geometry, workload);
    once();
    wrong = countWrongOutput(views, geometry, workload);
  }
  return aggregate(median(std::move(timesUs)), wrong);
}

void* Benchmark::address(const View& view, comm_dtype_t dtype) const {
  std::byte* base = view.buffer == Buffer::kSend ? send_.data() : recv_.data();
  return base + view.offset * comm_dtype_size(dtype);
}

void* Benchmark::tensorAddress(const View& view, comm_dtype_t dtype) const {
  if (device_ < 0) return address(view, dtype);
  const DeviceBuffer& buffer = view.buffer == Buffer::kSend ? *deviceSend_ : *deviceRecv_;
  return buffer.data() + view.offset * comm_dtype_size(dtype);
}

void Benchmark::upload(const View& view, comm_dtype_t dtype) {
  DeviceBuffer& buffer = view.buffer == Buffer::kSend ? *deviceSend_ : *deviceRecv_;
  buffer.upload(view.offset * comm_dtype_size(dtype), address(view, dtype), view.elements * comm_dtype_size(dtype));
}

void Benchmark::download(const View& view, comm_dtype_t dtype) {
  const DeviceBuffer& buffer = view.buffer == Buffer::kSend ? *deviceSend_ : *deviceRecv_;
  buffer.download(address(view, dtype), view.offset * comm_dtype_size(dtype), view.elements * comm_dtype_size(dtype));
}

// Outputs first, then inputs: in place the input lies inside the output.
void Benchmark::prepareData(const Views& views, const Geometry& geometry, const Workload& workload) {
  size_t elementSize = comm_dtype_size(workload.dtype);
  if (views.out) std::memset(address(*views.out, workload.dtype), 0, views.out->elements * elementSize);
  if (views.in) {
    fill(address(*views.in, workload.dtype), views.in->elements, workload.dtype,
         [&](size_t i) { return inputValue(workload, geometry.rank, i); });
  }
  if (device_ < 0) return;
  if (views.out) upload(*views.out, workload.dtype);
  if (views.in) upload(*views.in, workload.dtype);
}

int64_t Benchmark::countWrongOutput(const Views& views, const Geometry& geometry, const Workload& workload) {
  if (!views.out) return 0;
  if (device_ >= 0) download(*views.out, workload.dtype);
  return countWrong(address(*views.out, workload.dtype), views.out->elements, workload.dtype, [&](size_t i) {
    Source source = collective_.source(geometry, i);
    return source.rank == kEveryRank ? reducedValue(workload, source.index)
                                     : inputValue(workload, source.rank, source.index);
  });
}

Measurement Benchmark::aggregate(double medianUs, std::optional<int64_t> wrong) {
  std::vector<double> sums = allReduce(world_, {medianUs, static_cast<double>(wrong.value_or(0))}, COMM_OP_SUM);
  double minUs = allReduce(world_, {medianUs}, COMM_OP_MIN).front();
  double maxUs = allReduce(world_, {medianUs}, COMM_OP_MAX).front();
  Measurement m{medianUs, minUs, sums[0] / ranks_, maxUs, std::nullopt};
  switch (options_.aggregate) {
    case Aggregate::kRank0: break;  // only rank 0 prints: its own median
    case Aggregate::kMin: m.timeUs = m.minUs; break;
    case Aggregate::kAvg: m.timeUs = m.avgUs; break;
    case Aggregate::kMax: m.timeUs = m.maxUs; break;
  }
  if (wrong) m.wrong = static_cast<int64_t>(sums[1]);
  return m;
}

}  // namespace commbench
