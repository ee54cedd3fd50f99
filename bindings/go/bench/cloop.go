package main

/*
#cgo pkg-config: comm
#include <stdlib.h>
#include <time.h>
#include "comm.h"

// Seconds per call of `calls` blocking all_reduces (sum) of `count` float32 (inputs
// filled, so that every page is mapped), after a barrier; < 0 on failure.
static double comm_bench_all_reduce(comm_t *comm, int64_t count, int calls) {
  double result = -1;
  float *in = calloc((size_t)count, sizeof(float)), *out = calloc((size_t)count, sizeof(float));
  comm_tensor_t *tin = NULL, *tout = NULL;
  for (int64_t i = 0; in != NULL && out != NULL && i < count; ++i) { // real pages, as in the Go loop
    in[i] = 1.0f;
    out[i] = 0.0f;
  }
  if (in != NULL && out != NULL && comm_tensor_create(&tin, in, COMM_FLOAT32, 1, &count) == COMM_OK &&
      comm_tensor_create(&tout, out, COMM_FLOAT32, 1, &count) == COMM_OK && comm_barrier(comm, NULL) == COMM_OK) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int i = 0;
    while (i < calls && comm_all_reduce(comm, tin, tout, COMM_OP_SUM, NULL) == COMM_OK) ++i;
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (i == calls) result = ((double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9) / calls;
  }
  comm_tensor_destroy(tin);
  comm_tensor_destroy(tout);
  free(in);
  free(out);
  return result;
}

static comm_t *comm_bench_init(void) {
  comm_t *world = NULL;
  return comm_init(&world, NULL) == COMM_OK ? world : NULL;
}

static int comm_bench_rank(comm_t *comm) {
  int rank = -1;
  comm_rank(&rank, comm);
  return rank;
}
*/
import "C"

import "errors"

// cLoop is the reference: the loop of goLoop written in C.
type cLoop struct{ world *C.comm_t }

func newCLoop() (*cLoop, error) {
	world := C.comm_bench_init()
	if world == nil {
		return nil, errors.New("comm_init failed")
	}
	return &cLoop{world}, nil
}

func (l *cLoop) allReduce(count, calls int) (float64, error) {
	seconds := float64(C.comm_bench_all_reduce(l.world, C.int64_t(count), C.int(calls)))
	if seconds < 0 {
		return 0, errors.New("the C all_reduce loop failed")
	}
	return seconds, nil
}

func (l *cLoop) rank() int { return int(C.comm_bench_rank(l.world)) }
func (l *cLoop) close()    { C.comm_destroy(l.world) }
