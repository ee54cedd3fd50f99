// gloo_collectives.cc - the Gloo side of bench/compare: one collective over a
// list of sizes, measured the way comm-bench measures (bench_common.h).
// Gloo (Debian libgloo-dev) runs over its tcp transport on 127.0.0.1 and
// meets through a FileStore in a fresh temporary directory; the program
// forks its ranks itself and pins rank r to CPU r, like mpirun --bind-to core.
//   gloo_collectives all_reduce 8,64K,1M,4M,16M,64M [ranks=2]
// Calls: gloo::allreduce (default algorithm, out of place), gloo::reduce,
// gloo::broadcast (in place), gloo::allgather, ReduceScatterHalvingDoubling
// (Gloo's only reduce-scatter; in place), gloo::gather, gloo::scatter,
// gloo::alltoall, gloo::barrier; float32 sum, root 0.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);
const ReduceFunction kSum = &gloo::sum<float>;

struct Free {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], Free>;

class Rank {
 public:
  Rank(int rank, int ranks, const std::string& storeDir) : rank_(rank), ranks_(ranks) {
    gloo::transport::tcp::attr attr("127.0.0.1");
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(storeDir);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
    context_->setTimeout(std::chrono::seconds(300));
    context_->connectFullMesh(store, device);
  }

  // The call for `c` on `count` elements per rank (per block).
  std::function<void()> call(bench_collective c, float* send, float* recv, size_t count) {
    switch (c) {
      case BENCH_ALL_REDUCE:
        return [=, this] {
          gloo::AllreduceOptions o(context_);
          o.setInput(send, count);
          o.setOutput(recv, count);
          o.setReduceFunction(kSum);
          o.setTag(nextTag());
          gloo::allreduce(o);
        };
      case BENCH_REDUCE:
        return [=, this] {
          gloo::ReduceOptions o(context_);
          o.setInput(send, count);
          o.setOutput(recv, count);
          o.setRoot(0);
          o.setReduceFunction(kSum);
          o.setTag(nextTag());
          gloo::reduce(o);
        };
      case BENCH_BROADCAST:
        return [=, this] {
          gloo::BroadcastOptions o(context_);
          o.setOutput(recv, count);
          o.setRoot(0);
          o.setTag(nextTag());
          gloo::broadcast(o);
        };
      case BENCH_ALL_GATHER:
        return [=, this] {
          gloo::AllgatherOptions o(context_);
          o.setInput(send, count);
          o.setOutput(recv, count * ranks_);
          o.setTag(nextTag());
          gloo::allgather(o);
        };
      case BENCH_REDUCE_SCATTER: {
        auto algorithm = std::make_shared<gloo::ReduceScatterHalvingDoubling<float>>(
            context_, std::vector<float*>{send}, static_cast<int>(count * ranks_),
            std::vector<int>(ranks_, static_cast<int>(count)));
        return [algorithm] { algorithm->run(); };
      }
      case BENCH_GATHER:
        return [=, this] {
          gloo::GatherOptions o(context_);
          o.setInput(send, count);
          if (rank_ == 0) o.setOutput(recv, count * ranks_);
          o.setRoot(0);
          o.setTag(nextTag());
          gloo::gather(o);
        };
      case BENCH_SCATTER:
        return [=, this] {
          gloo::ScatterOptions o(context_);
          if (rank_ == 0) {
            std::vector<float*> blocks;
            for (int r = 0; r < ranks_; ++r) blocks.push_back(send + r * count);
            o.setInputs(blocks, count);
          }
          o.setOutput(recv, count);
          o.setRoot(0);
          o.setTag(nextTag());
          gloo::scatter(o);
        };
      case BENCH_ALL_TO_ALL:
        return [=, this] {
          gloo::AlltoallOptions o(context_);
          o.setInput(send, count * ranks_);
          o.setOutput(recv, count * ranks_);
          o.setTag(nextTag());
          gloo::alltoall(o);
        };
      case BENCH_BARRIER:
      case BENCH_UNKNOWN: break;
    }
    return [this] { barrier(); };
  }

  void barrier() {
    gloo::BarrierOptions o(context_);
    o.setTag(nextTag());
    gloo::barrier(o);
  }

  double slowest(double mine) {
    gloo::AllreduceOptions o(context_);
    o.setOutput(&mine, 1);
    o.setReduceFunction(static_cast<ReduceFunction>(&gloo::max<double>));
    o.setTag(nextTag());
    gloo::allreduce(o);
    return mine;
  }

 private:
  uint32_t nextTag() { return tag_++; }

  int rank_;
  int ranks_;
  uint32_t tag_ = 1;
  std::shared_ptr<gloo::rendezvous::Context> context_;
};

int runRank(int rank, int ranks, const std::string& storeDir, bench_collective c, const std::vector<size_t>& sizes) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(rank % sysconf(_SC_NPROCESSORS_ONLN), &cpus);
  sched_setaffinity(0, sizeof cpus, &cpus);

  Rank self(rank, ranks, storeDir);
  size_t largest = 0;
  for (size_t s : sizes) largest = std::max(largest, s);
  Buffer send(bench_buffer(largest, 1.0f)), recv(bench_buffer(largest, 0.0f));
  if (!send || !recv) throw std::bad_alloc();
  std::vector<double> times;
  for (size_t bytes : sizes) {
    std::function<void()> once = self.call(c, send.get(), recv.get(), bench_count(c, bytes, ranks));
    int iterations = bench_iterations(bytes);
    for (int i = 0; i < BENCH_WARMUP; ++i) once();
    self.barrier();
    times.assign(iterations, 0.0);
    for (double& t : times) {
      double start = bench_now_us();
      once();
      t = bench_now_us() - start;
    }
    double slowest = self.slowest(bench_median(times.data(), iterations));
    if (rank == 0) bench_print_result(c, bytes, slowest, iterations);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t parsed[BENCH_MAX_SIZES];
  bench_collective c = argc >= 3 ? bench_collective_from_name(argv[1]) : BENCH_UNKNOWN;
  int nsizes = argc >= 3 ? bench_parse_sizes(argv[2], parsed, BENCH_MAX_SIZES) : -1;
  int ranks = argc >= 4 ? std::atoi(argv[3]) : 2;
  if (c == BENCH_UNKNOWN || nsizes <= 0 || ranks < 1) {
    std::fprintf(stderr, "usage: %s COLLECTIVE SIZES [RANKS] (e.g. all_reduce 8,64K,1M 2)\n", argv[0]);
    return 2;
  }
  std::vector<size_t> sizes(parsed, parsed + nsizes);
  if (c == BENCH_BARRIER) sizes = {0};

  char dirTemplate[] = "/tmp/gloo_collectives.XXXXXX";
  if (mkdtemp(dirTemplate) == nullptr) {
    std::perror("gloo_collectives: mkdtemp");
    return 1;
  }
  std::string storeDir = dirTemplate;
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int status = 1;
      try {
        status = runRank(r, ranks, storeDir, c, sizes);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gloo_collectives rank %d: %s\n", r, e.what());
      }
      std::fflush(stdout);
      _exit(status);
    }
    if (pid < 0) std::perror("gloo_collectives: fork");
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(storeDir, ignored);
  return failed;
}
