// comm's device kernels and CUDA IPC, on a GPU: every dtype x op of
// cuda/reduce_kernels.h against reduce/'s host kernels bit for bit (odd
// counts and misaligned pointers take the scalar path, the rest the
// vectorised one), the average against finishAverage, and a device buffer
// opened by another process through an IPC handle travelling as text.
// Skips (exit 77) without a GPU.
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/error.h"
#include "cuda/ipc.h"
#include "cuda/reduce_kernels.h"
#include "cuda_skip.h"
#include "reduce/reduce.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

#define CHECK_CUDA(call)                                                      \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_)); \
  } while (0)

// Random bytes that are valid values of `dtype`: bools 0..3 (non-zero is
// true), everything else any bit pattern (NaNs, infinities, -0 included).
std::vector<uint8_t> randomValues(comm_dtype_t dtype, size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> bytes(count * comm::dtypeSize(dtype) + 64);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
  if (dtype == COMM_BOOL)
    for (uint8_t& b : bytes) b &= 3;
  return bytes;
}

template <class T>
bool bothNaN(const uint8_t* a, const uint8_t* b) {
  T x, y;
  std::memcpy(&x, a, sizeof x);
  std::memcpy(&y, b, sizeof y);
  return std::isnan(x) && std::isnan(y);
}

// The first element where `got` differs from `expected`, or count: bit for
// bit, except that any NaN matches any NaN in float32/float64 (the GPU's
// arithmetic makes its own canonical NaN, x86's keeps an operand's).
size_t firstDifference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& expected, comm_dtype_t dtype) {
  const size_t element = comm::dtypeSize(dtype), count = got.size() / element;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t *g = got.data() + i * element, *e = expected.data() + i * element;
    if (std::memcmp(g, e, element) == 0) continue;
    if (dtype == COMM_FLOAT32 && bothNaN<float>(g, e)) continue;
    if (dtype == COMM_FLOAT64 && bothNaN<double>(g, e)) continue;
    return i;
  }
  return count;
}

void kernels_match_the_host(void**) {
  const size_t counts[] = {1, 7, 4096 + 3};
  for (int d = COMM_INT8; d <= COMM_BOOL; ++d) {
    auto dtype = static_cast<comm_dtype_t>(d);
    const size_t element = comm::dtypeSize(dtype);
    for (int o = COMM_OP_SUM; o <= COMM_OP_BXOR; ++o) {
      auto op = static_cast<comm_op_t>(o);
      if (!comm::reduce::supported(dtype, op)) continue;
      for (size_t count : counts) {
        for (size_t misalign : {size_t{0}, element}) {
          std::vector<uint8_t> a = randomValues(dtype, count, 1 + d * 31 + o),
                               b = randomValues(dtype, count, 7 + d + o);
          const size_t bytes = count * element;
          std::vector<uint8_t> expected(bytes), got(bytes);
          comm::reduce::combine(expected.data(), a.data(), b.data(), count, dtype, op);
          char *da = nullptr, *db = nullptr, *dout = nullptr;
          CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&da), bytes + 64));
          CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&db), bytes + 64));
          CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&dout), bytes + 64));
          CHECK_CUDA(cudaMemcpy(da + misalign, a.data(), bytes, cudaMemcpyHostToDevice));
          CHECK_CUDA(cudaMemcpy(db + misalign, b.data(), bytes, cudaMemcpyHostToDevice));
          comm::cuda::combineOnDevice(dout + misalign, da + misalign, db + misalign, count, dtype, op, nullptr);
          if (op == COMM_OP_AVG) {
            comm::reduce::finishAverage(expected.data(), count, dtype, 3);
            comm::cuda::finishAverageOnDevice(dout + misalign, count, dtype, 3, nullptr);
          }
          CHECK_CUDA(cudaMemcpy(got.data(), dout + misalign, bytes, cudaMemcpyDeviceToHost));
          if (size_t at = firstDifference(got, expected, dtype); at < count) {
            fail_msg("%s %s count %zu misaligned %zu: element %zu differs", comm::dtypeName(dtype), comm::opName(op),
                     count, misalign, at);
          }
          cudaFree(da);
          cudaFree(db);
          cudaFree(dout);
        }
      }
    }
  }
}

// The other process of the IPC test (this program run with --ipc-child):
// opens the buffer whose handle comes as text on stdin, as the store would
// carry it, checks it, negates it, and says 1 on stdout when all went well.
int ipcChild() {
  char text[512] = {};
  ssize_t n = read(0, text, sizeof text - 1);
  int ok = 0;
  try {
    comm::cuda::PeerBuffer peer(comm::cuda::decode(std::string(text, n > 0 ? n : 0), "the parent"), 0);
    std::vector<int32_t> values(peer.bytes() / 4);
    ok = cudaMemcpy(values.data(), peer.data(), peer.bytes(), cudaMemcpyDeviceToHost) == cudaSuccess &&
         values.size() == 1000 && values[999] == 999 + 5;
    for (int32_t& v : values) v = -v;
    ok = ok && cudaMemcpy(peer.data(), values.data(), peer.bytes(), cudaMemcpyHostToDevice) == cudaSuccess;
  } catch (const comm::Error& e) {
    fprintf(stderr, "ipc child: %s\n", e.what());
  }
  printf("%d\n", ok);
  return 0;
}

const char* self;  // this program, for the IPC child

// Another process (a fresh one: CUDA does not survive fork) opens this
// process's buffer through its IPC handle and changes it.
void ipc_buffer_opens_in_another_process(void**) {
  char* base = nullptr;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&base), 8192));
  std::vector<int32_t> values(1000);
  for (int i = 0; i < 1000; ++i) values[i] = i + 5;
  char* buffer = base + 256;  // inside the allocation: the handle carries the offset
  CHECK_CUDA(cudaMemcpy(buffer, values.data(), 4000, cudaMemcpyHostToDevice));
  comm::cuda::IpcHandle handle = comm::cuda::exportBuffer(buffer, 4000, 0);
  assert_int_equal(handle.offset, 256);
  int toChild[2], toParent[2];
  assert_int_equal(pipe(toChild), 0);
  assert_int_equal(pipe(toParent), 0);
  pid_t child = fork();
  if (child == 0) {
    dup2(toChild[0], 0);
    dup2(toParent[1], 1);
    close(toChild[1]);
    close(toParent[0]);
    execl(self, self, "--ipc-child", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(toChild[0]);
  close(toParent[1]);
  std::string text = comm::cuda::encode(handle);
  assert_int_equal(write(toChild[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(toChild[1]);
  char answer[8] = {};
  assert_true(read(toParent[0], answer, sizeof answer - 1) > 0);
  close(toParent[0]);
  int status = 0;
  waitpid(child, &status, 0);
  assert_true(answer[0] == '1');
  CHECK_CUDA(cudaMemcpy(values.data(), buffer, 4000, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 1000; ++i) assert_int_equal(values[i], -(i + 5));
  // CUDA refuses to open a process's own handle; comm says so first.
  try {
    comm::cuda::PeerBuffer mine(handle, 0);
    fail_msg("opened its own handle");
  } catch (const comm::Error& e) {
    assert_int_equal(e.status(), COMM_ERR_INVALID_ARGUMENT);
  }
  cudaFree(base);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--ipc-child") return ipcChild();
  self = argv[0];
  if (cuda_devices_or_skip_reason("cuda_kernels_test") == 0) return COMM_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernels_match_the_host),
      cmocka_unit_test(ipc_buffer_opens_in_another_process),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
