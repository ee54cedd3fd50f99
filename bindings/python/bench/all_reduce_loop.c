/*
 * The C side of all_reduce_overhead.py: a loop of blocking comm_all_reduce
 * calls on float32 buffers, timed in C, so that the Python benchmark can run
 * C rounds and Python rounds alternately on one communicator, in one process.
 */
#include <stdlib.h>
#include <time.h>

#include "comm.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * Seconds per call of `calls` all_reduces (sum) of `count` float32 on `comm`,
 * after a barrier; with `fresh_output`, each call writes a newly allocated
 * output, as Python's all_reduce does. Negative on failure.
 */
double comm_bench_all_reduce(comm_t *comm, int64_t count, int calls, int fresh_output) {
  double result = -1;
  float *in = malloc((size_t)count * sizeof(float));
  float *out = calloc((size_t)count, sizeof(float));
  comm_tensor_t *tin = NULL, *tout = NULL;
  if (in == NULL || out == NULL) goto done;
  for (int64_t i = 0; i < count; ++i) in[i] = 1.0f; /* real pages, not the shared zero page */
  if (comm_tensor_create(&tin, in, COMM_FLOAT32, 1, &count) != COMM_OK ||
      comm_tensor_create(&tout, out, COMM_FLOAT32, 1, &count) != COMM_OK || comm_barrier(comm, NULL) != COMM_OK) {
    goto done;
  }
  double start = now();
  for (int i = 0; i < calls; ++i) {
    float *fresh = fresh_output ? malloc((size_t)count * sizeof(float)) : NULL;
    if (fresh_output && (fresh == NULL || comm_tensor_set_data(tout, fresh) != COMM_OK)) goto done;
    comm_status_t status = comm_all_reduce(comm, tin, tout, COMM_OP_SUM, NULL);
    free(fresh);
    if (status != COMM_OK) goto done;
  }
  result = (now() - start) / calls;
done:
  comm_tensor_destroy(tin);
  comm_tensor_destroy(tout);
  free(in);
  free(out);
  return result;
}
