/* Collectives, sends and receives on CUDA device memory, against references
 * computed here, at any rank count (ranks may share one GPU): every
 * collective and its _v form, in place and out of place, blocking, through
 * a handle and ordered on a stream; bad input (mixed memory, a host pointer
 * marked CUDA, a device pointer marked host, a device that does not exist).
 * Needs a GPU: skips (exit 77) without one. */
#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../multiproc/world.h"
#include "cuda_skip.h"

static int device;

#define CHECK_CUDA(call)                                                      \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_)); \
  } while (0)

/* A 1-d tensor of `count` elements of `dtype` in device memory. */
static comm_tensor_t *device_tensor(void *data, comm_dtype_t dtype, int64_t count) {
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, data, dtype, 1, &count), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(t, COMM_MEMORY_CUDA, device), COMM_OK);
  return t;
}

static void *device_alloc(size_t bytes) {
  void *p = NULL;
  CHECK_CUDA(cudaMalloc(&p, bytes > 0 ? bytes : 1));
  return p;
}

static void upload(void *dst, const void *src, size_t bytes) {
  CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

static void download(void *dst, const void *src, size_t bytes) {
  CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

static float value_of(int r, int64_t i) { return (float)(r + 1) + (float)(i % 97) * 0.5f; }

/* all_reduce of float32 SUM, int32 MAX and float64 AVG, out of place and
 * in place, blocking and through a handle. */
static void all_reduce_on_device(void **state) {
  (void)state;
  /* staged through host memory (small), and on the device where ranks share
   * a GPU: in one piece, and in two chunks of the device scratch */
  const int64_t counts[] = {1, 1000, (4 << 20) + 3, (9 << 20) + 5};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    int64_t n = counts[c];
    float *host = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; ++i) host[i] = value_of(rank, i);
    void *in = device_alloc((size_t)n * 4), *out = device_alloc((size_t)n * 4);
    upload(in, host, (size_t)n * 4);
    comm_tensor_t *tin = device_tensor(in, COMM_FLOAT32, n), *tout = device_tensor(out, COMM_FLOAT32, n);
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      for (int async = 0; async < 2; ++async) {
        if (inPlace) upload(out, host, (size_t)n * 4);
        comm_handle_t *h = NULL;
        assert_int_equal(comm_all_reduce(world, inPlace ? tout : tin, tout, COMM_OP_SUM, async ? &h : NULL), COMM_OK);
        if (async) {
          assert_int_equal(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT), COMM_OK);
          comm_handle_destroy(h);
        }
        float *result = malloc((size_t)n * sizeof(float));
        download(result, out, (size_t)n * 4);
        for (int64_t i = 0; i < n; ++i) {
          float expected = 0;
          for (int r = 0; r < size; ++r) expected += value_of(r, i);
          if (result[i] != expected)
            fail_msg("n %lld element %lld: %g, expected %g", (long long)n, (long long)i, (double)result[i],
                     (double)expected);
        }
        free(result);
      }
    }
    comm_tensor_destroy(tin);
    comm_tensor_destroy(tout);
    cudaFree(in);
    cudaFree(out);
    free(host);
  }
  /* float64 AVG large enough for the device path: one division, at the end */
  {
    const int64_t n = 200000;
    double *values = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; ++i) values[i] = rank + (double)(i % 5);
    void *dv = device_alloc((size_t)n * 8);
    upload(dv, values, (size_t)n * 8);
    comm_tensor_t *tv = device_tensor(dv, COMM_FLOAT64, n);
    assert_int_equal(comm_all_reduce(world, tv, tv, COMM_OP_AVG, NULL), COMM_OK);
    download(values, dv, (size_t)n * 8);
    for (int64_t i = 0; i < n; ++i) {
      double expected = (double)(size - 1) / 2.0 + (double)(i % 5);
      if (values[i] != expected) fail_msg("avg element %lld: %g, expected %g", (long long)i, values[i], expected);
    }
    comm_tensor_destroy(tv);
    cudaFree(dv);
    free(values);
  }
  /* int32 MAX and float64 AVG, small. */
  int32_t mine = 10 * rank - 3, largest = 0;
  double share = rank, mean = -1;
  void *d = device_alloc(8);
  upload(d, &mine, 4);
  comm_tensor_t *t = device_tensor(d, COMM_INT32, 1);
  assert_int_equal(comm_all_reduce(world, t, t, COMM_OP_MAX, NULL), COMM_OK);
  download(&largest, d, 4);
  assert_int_equal(largest, 10 * (size - 1) - 3);
  comm_tensor_destroy(t);
  upload(d, &share, 8);
  t = device_tensor(d, COMM_FLOAT64, 1);
  assert_int_equal(comm_all_reduce(world, t, t, COMM_OP_AVG, NULL), COMM_OK);
  download(&mean, d, 8);
  assert_true(mean == (double)(size - 1) / 2.0);
  comm_tensor_destroy(t);
  cudaFree(d);
}

/* broadcast, all_gather (and in place), reduce_scatter, gather, scatter,
 * all_to_all_single and all_gather_v, each against its reference. */
static void data_collectives_on_device(void **state) {
  (void)state;
  enum { kRow = 3 };
  const size_t rowBytes = kRow * sizeof(int32_t);
  int32_t *mine = malloc(rowBytes), *all = malloc(rowBytes * (size_t)size), *got = malloc(rowBytes * (size_t)size);
  for (int i = 0; i < kRow; ++i) mine[i] = 100 * rank + i;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < kRow; ++i) all[r * kRow + i] = 100 * r + i;
  void *din = device_alloc(rowBytes * (size_t)size), *dout = device_alloc(rowBytes * (size_t)size);
  int64_t rowShape[2] = {1, kRow}, allShape[2] = {size, kRow};
  comm_tensor_t *row = NULL, *rows = NULL, *rowsIn = NULL;
  assert_int_equal(comm_tensor_create(&row, din, COMM_INT32, 2, rowShape), COMM_OK);
  assert_int_equal(comm_tensor_create(&rows, dout, COMM_INT32, 2, allShape), COMM_OK);
  assert_int_equal(comm_tensor_create(&rowsIn, din, COMM_INT32, 2, allShape), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(row, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(rows, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(rowsIn, COMM_MEMORY_CUDA, device), COMM_OK);

  /* all_gather */
  upload(din, mine, rowBytes);
  assert_int_equal(comm_all_gather(world, row, rows, NULL), COMM_OK);
  download(got, dout, rowBytes * (size_t)size);
  assert_memory_equal(got, all, rowBytes * (size_t)size);
  /* all_gather in place: in is this rank's block of out */
  CHECK_CUDA(cudaMemset(dout, 0, rowBytes * (size_t)size));
  upload((char *)dout + rowBytes * (size_t)rank, mine, rowBytes);
  comm_tensor_t *slot = NULL;
  assert_int_equal(comm_tensor_create(&slot, (char *)dout + rowBytes * (size_t)rank, COMM_INT32, 2, rowShape), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(slot, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_all_gather(world, slot, rows, NULL), COMM_OK);
  download(got, dout, rowBytes * (size_t)size);
  assert_memory_equal(got, all, rowBytes * (size_t)size);
  comm_tensor_destroy(slot);

  /* broadcast from the last rank into out */
  int root = size - 1;
  upload(din, all, rowBytes * (size_t)size);
  assert_int_equal(comm_broadcast(world, rowsIn, rows, root, NULL), COMM_OK);
  download(got, dout, rowBytes * (size_t)size);
  assert_memory_equal(got, all, rowBytes * (size_t)size);

  /* reduce_scatter SUM: every rank gives `all`; rank r gets size x row r
   * (out of place: only rank r's block of the input may be its output) */
  upload(din, all, rowBytes * (size_t)size);
  comm_tensor_t *rowOut = NULL;
  assert_int_equal(comm_tensor_create(&rowOut, dout, COMM_INT32, 2, rowShape), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(rowOut, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_reduce_scatter(world, rowsIn, rowOut, COMM_OP_SUM, NULL), COMM_OK);
  download(got, dout, rowBytes);
  for (int i = 0; i < kRow; ++i) assert_int_equal(got[i], size * all[rank * kRow + i]);
  comm_tensor_destroy(rowOut);

  /* gather to rank 0, scatter from rank 0 */
  upload(din, mine, rowBytes);
  assert_int_equal(comm_gather(world, row, rank == 0 ? rows : NULL, 0, NULL), COMM_OK);
  if (rank == 0) {
    download(got, dout, rowBytes * (size_t)size);
    assert_memory_equal(got, all, rowBytes * (size_t)size);
  }
  upload(dout, all, rowBytes * (size_t)size);
  assert_int_equal(comm_scatter(world, rank == 0 ? rows : NULL, row, 0, NULL), COMM_OK);
  download(got, din, rowBytes);
  assert_memory_equal(got, mine, rowBytes);

  /* all_to_all_single: rank r sends row p (value 1000 r + p) to rank p */
  int32_t *send = malloc(rowBytes * (size_t)size);
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < kRow; ++i) send[p * kRow + i] = 1000 * rank + p;
  upload(din, send, rowBytes * (size_t)size);
  assert_int_equal(comm_all_to_all_single(world, rowsIn, rows, NULL, NULL, NULL), COMM_OK);
  download(got, dout, rowBytes * (size_t)size);
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < kRow; ++i) assert_int_equal(got[p * kRow + i], 1000 * p + rank);
  free(send);

  /* all_gather_v: rank r gives r % 2 + 1 rows */
  int64_t *counts = malloc(sizeof(int64_t) * (size_t)size), total = 0;
  for (int r = 0; r < size; ++r) total += counts[r] = r % 2 + 1;
  void *vin = device_alloc(rowBytes * 2), *vout = device_alloc(rowBytes * (size_t)total);
  int32_t vmine[2 * kRow];
  for (int i = 0; i < 2 * kRow; ++i) vmine[i] = 7 * rank + i;
  upload(vin, vmine, rowBytes * 2);
  int64_t vinShape[2] = {counts[rank], kRow}, voutShape[2] = {total, kRow};
  comm_tensor_t *tvin = NULL, *tvout = NULL;
  assert_int_equal(comm_tensor_create(&tvin, vin, COMM_INT32, 2, vinShape), COMM_OK);
  assert_int_equal(comm_tensor_create(&tvout, vout, COMM_INT32, 2, voutShape), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(tvin, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(tvout, COMM_MEMORY_CUDA, device), COMM_OK);
  assert_int_equal(comm_all_gather_v(world, tvin, tvout, counts, NULL), COMM_OK);
  int32_t *vgot = malloc(rowBytes * (size_t)total);
  download(vgot, vout, rowBytes * (size_t)total);
  int64_t at = 0;
  for (int r = 0; r < size; ++r)
    for (int64_t i = 0; i < counts[r] * kRow; ++i) assert_int_equal(vgot[at++], 7 * r + (int32_t)i);
  free(vgot);
  comm_tensor_destroy(tvin);
  comm_tensor_destroy(tvout);
  cudaFree(vin);
  cudaFree(vout);
  free(counts);

  comm_tensor_destroy(row);
  comm_tensor_destroy(rows);
  comm_tensor_destroy(rowsIn);
  cudaFree(din);
  cudaFree(dout);
  free(mine);
  free(all);
  free(got);
}

/* A ring of sends and receives on device memory, as a batch. */
static void send_recv_on_device(void **state) {
  (void)state;
  if (size < 2) skip();
  int64_t n = 1 << 16;
  void *out = device_alloc((size_t)n * 4), *in = device_alloc((size_t)n * 4);
  float *host = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i) host[i] = value_of(rank, i);
  upload(out, host, (size_t)n * 4);
  comm_tensor_t *tout = device_tensor(out, COMM_FLOAT32, n), *tin = device_tensor(in, COMM_FLOAT32, n);
  comm_batch_t *batch = NULL;
  assert_int_equal(comm_batch_create(&batch), COMM_OK);
  assert_int_equal(comm_batch_add_send(batch, tout, (rank + 1) % size, 5), COMM_OK);
  assert_int_equal(comm_batch_add_recv(batch, tin, (rank + size - 1) % size, 5), COMM_OK);
  comm_handle_t *h = NULL;
  assert_int_equal(comm_batch_start(world, batch, &h), COMM_OK);
  assert_int_equal(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT), COMM_OK);
  comm_handle_destroy(h);
  download(host, in, (size_t)n * 4);
  int from = (rank + size - 1) % size;
  for (int64_t i = 0; i < n; ++i) assert_true(host[i] == value_of(from, i));
  comm_batch_destroy(batch);
  comm_tensor_destroy(tout);
  comm_tensor_destroy(tin);
  cudaFree(out);
  cudaFree(in);
  free(host);
}

static atomic_int released;

/* Holds the stream until the test says go: the host func blocks the
 * stream, not comm. */
/* reduce and broadcast large enough to be staged in parts
 * (algo/device/staged_segments.h: the copies overlap the messages), in place and
 * out of place, through a handle too, at roots 0 and size - 1. */
static void large_reduce_and_broadcast_on_device(void **state) {
  (void)state;
  const int64_t n = (3 << 20) + 7; /* three parts of float32, the last uneven */
  const size_t bytes = (size_t)n * 4;
  float *host = malloc(bytes), *got = malloc(bytes);
  void *in = device_alloc(bytes), *out = device_alloc(bytes);
  comm_tensor_t *tin = device_tensor(in, COMM_FLOAT32, n), *tout = device_tensor(out, COMM_FLOAT32, n);
  for (int which = 0; which < 2; ++which) {
    int root = which == 0 ? 0 : size - 1;
    int inPlace = which == 1;
    /* reduce SUM to `root` */
    for (int64_t i = 0; i < n; ++i) host[i] = value_of(rank, i);
    upload(inPlace ? out : in, host, bytes);
    CHECK_CUDA(cudaMemset(inPlace ? in : out, 0, bytes));
    comm_handle_t *h = NULL;
    assert_int_equal(comm_reduce(world, inPlace ? tout : tin, tout, COMM_OP_SUM, root, inPlace ? &h : NULL), COMM_OK);
    if (h != NULL) {
      assert_int_equal(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT), COMM_OK);
      comm_handle_destroy(h);
    }
    if (rank == root) {
      download(got, out, bytes);
      for (int64_t i = 0; i < n; ++i) {
        float expected = 0;
        for (int r = 0; r < size; ++r) expected += value_of(r, i);
        if (got[i] != expected)
          fail_msg("reduce to %d, element %lld: %g, expected %g", root, (long long)i, (double)got[i], (double)expected);
      }
    }
    /* broadcast from `root`: in place (in is out) or from in into out */
    for (int64_t i = 0; i < n; ++i) host[i] = value_of(root, i) * 3.0f;
    if (rank == root) upload(inPlace ? out : in, host, bytes);
    if (rank != root || !inPlace) CHECK_CUDA(cudaMemset(out, 0, bytes));
    assert_int_equal(comm_broadcast(world, rank == root && !inPlace ? tin : tout, tout, root, NULL), COMM_OK);
    download(got, out, bytes);
    if (memcmp(got, host, bytes) != 0) fail_msg("broadcast from %d (in place %d): wrong result", root, inPlace);
  }
  comm_tensor_destroy(tin);
  comm_tensor_destroy(tout);
  cudaFree(in);
  cudaFree(out);
  free(host);
  free(got);
}

static void CUDART_CB hold_stream(void *unused) {
  (void)unused;
  while (!atomic_load(&released)) {
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
}

/* Stream order: the call returns while the stream is still held by work
 * enqueued before it (so comm did not wait for the stream on the host), the
 * input written by that earlier work is what is reduced, and a copy
 * enqueued after the call sees the result. */
static void stream_ordered_all_reduce(void **state) {
  (void)state;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int64_t n = (3 << 20) + 7; /* staged in parts (algo/device/staged_segments.h) */
  float *pinned = NULL;
  CHECK_CUDA(cudaMallocHost((void **)&pinned, (size_t)n * 4));
  for (int64_t i = 0; i < n; ++i) pinned[i] = value_of(rank, i);
  void *d = device_alloc((size_t)n * 4);
  CHECK_CUDA(cudaMemset(d, 0, (size_t)n * 4));
  comm_tensor_t *t = device_tensor(d, COMM_FLOAT32, n);
  atomic_store(&released, 0);
  CHECK_CUDA(cudaLaunchHostFunc(stream, hold_stream, NULL));
  CHECK_CUDA(cudaMemcpyAsync(d, pinned, (size_t)n * 4, cudaMemcpyHostToDevice, stream));
  assert_int_equal(comm_set_stream(world, stream), COMM_OK);
  void *current = NULL;
  assert_int_equal(comm_stream(&current, world), COMM_OK);
  assert_ptr_equal(current, stream);
  assert_int_equal(comm_all_reduce(world, t, t, COMM_OP_SUM, NULL), COMM_OK);
  atomic_store(&released, 1); /* only now can the stream, and so the collective, go on */
  CHECK_CUDA(cudaMemcpyAsync(pinned, d, (size_t)n * 4, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  for (int64_t i = 0; i < n; ++i) {
    float expected = 0;
    for (int r = 0; r < size; ++r) expected += value_of(r, i);
    if (pinned[i] != expected)
      fail_msg("element %lld: %g, expected %g", (long long)i, (double)pinned[i], (double)expected);
  }
  /* With a handle: it completes on the host too. */
  comm_handle_t *h = NULL;
  assert_int_equal(comm_all_reduce(world, t, t, COMM_OP_MAX, &h), COMM_OK);
  assert_int_equal(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT), COMM_OK);
  comm_handle_destroy(h);
  assert_int_equal(comm_set_stream(world, NULL), COMM_OK);
  assert_int_equal(comm_stream(&current, world), COMM_OK);
  assert_null(current);
  comm_tensor_destroy(t);
  cudaFree(d);
  cudaFreeHost(pinned);
  cudaStreamDestroy(stream);
}

static void expect_error(comm_status_t status, comm_status_t expected, const char *call, const char *words) {
  assert_int_equal(status, expected);
  const char *message = comm_last_error();
  if (strstr(message, call) == NULL || strstr(message, words) == NULL)
    fail_msg("expected a message naming %s and \"%s\", got \"%s\"", call, words, message);
}

/* Bad input: each a status and a message at the call, and no collective
 * started (the ranks stay in step). */
static void bad_device_input_is_refused(void **state) {
  (void)state;
  float host[4] = {0};
  int64_t four = 4;
  void *d = device_alloc(16);
  comm_tensor_t *onDevice = device_tensor(d, COMM_FLOAT32, 4), *onHost = NULL, *lying = NULL, *hidden = NULL;
  assert_int_equal(comm_tensor_create(&onHost, host, COMM_FLOAT32, 1, &four), COMM_OK);
  /* mixed memory, both named */
  expect_error(comm_all_reduce(world, onHost, onDevice, COMM_OP_SUM, NULL), COMM_ERR_INVALID_ARGUMENT,
               "comm_all_reduce", "in is in host memory but out is in the memory of CUDA device");
  /* a host pointer marked CUDA */
  assert_int_equal(comm_tensor_create(&lying, host, COMM_FLOAT32, 1, &four), COMM_OK);
  assert_int_equal(comm_tensor_set_memory(lying, COMM_MEMORY_CUDA, device), COMM_OK);
  expect_error(comm_all_reduce(world, lying, lying, COMM_OP_SUM, NULL), COMM_ERR_INVALID_ARGUMENT, "comm_all_reduce",
               "host memory");
  /* a device pointer marked host */
  assert_int_equal(comm_tensor_create(&hidden, d, COMM_FLOAT32, 1, &four), COMM_OK);
  expect_error(comm_all_reduce(world, hidden, hidden, COMM_OP_SUM, NULL), COMM_ERR_INVALID_ARGUMENT, "comm_all_reduce",
               "marked as host memory");
  expect_error(comm_send(world, hidden, 0, 1, NULL), COMM_ERR_INVALID_ARGUMENT, "comm_send", "marked as host memory");
  /* a device that does not exist */
  int devices = 0;
  comm_cuda_device_count(&devices, NULL);
  expect_error(comm_tensor_set_memory(onHost, COMM_MEMORY_CUDA, devices), COMM_ERR_INVALID_ARGUMENT,
               "comm_tensor_set_memory", "does not exist");
  /* a stream of another device than the tensors' */
  if (devices > 1) {
    cudaStream_t other;
    CHECK_CUDA(cudaSetDevice((device + 1) % devices));
    CHECK_CUDA(cudaStreamCreate(&other));
    CHECK_CUDA(cudaSetDevice(device));
    assert_int_equal(comm_set_stream(world, other), COMM_OK);
    expect_error(comm_all_reduce(world, onDevice, onDevice, COMM_OP_SUM, NULL), COMM_ERR_INVALID_ARGUMENT,
                 "comm_all_reduce", "belongs to CUDA device");
    assert_int_equal(comm_set_stream(world, NULL), COMM_OK);
    cudaStreamDestroy(other);
  }
  assert_int_equal(comm_barrier(world, NULL), COMM_OK);
  comm_tensor_destroy(onDevice);
  comm_tensor_destroy(onHost);
  comm_tensor_destroy(lying);
  comm_tensor_destroy(hidden);
  cudaFree(d);
}

/* Ranks of one collective agree on the kind of memory: rank 0 on the host
 * and the others on the device is a mismatch every rank reports, naming
 * device memory. Last: a mismatch ends the communicator's collectives. */
static void memory_must_agree_across_ranks(void **state) {
  (void)state;
  if (size < 2) skip();
  assert_int_equal(comm_set_stream(world, NULL), COMM_OK); /* even after a failure above: a blocking call */
  const int64_t n = 1 << 16;
  void *d = device_alloc((size_t)n * 4);
  float *host = calloc((size_t)n, 4);
  comm_tensor_t *t = NULL;
  if (rank == 0) {
    assert_int_equal(comm_tensor_create(&t, host, COMM_FLOAT32, 1, &n), COMM_OK);
  } else {
    t = device_tensor(d, COMM_FLOAT32, n);
  }
  expect_error(comm_all_reduce(world, t, t, COMM_OP_SUM, NULL), COMM_ERR_MISMATCH, "all_reduce", "device memory");
  comm_tensor_destroy(t);
  cudaFree(d);
  free(host);
}

int main(void) {
  int devices = cuda_devices_or_skip_reason("cuda_collectives_test");
  if (devices == 0) return COMM_TEST_SKIP;
  if (join_world()) return 1;
  /* Ranks of a node share its devices round-robin (the test machine has one). */
  int local = 0;
  comm_local_rank(&local, world);
  device = local % devices;
  if (cudaSetDevice(device) != cudaSuccess) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_reduce_on_device),
      cmocka_unit_test(data_collectives_on_device),
      cmocka_unit_test(large_reduce_and_broadcast_on_device),
      cmocka_unit_test(send_recv_on_device),
      cmocka_unit_test(stream_ordered_all_reduce),
      cmocka_unit_test(bad_device_input_is_refused),
      cmocka_unit_test(memory_must_agree_across_ranks),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
