/* comm-pingpong: rank 0 and rank 1 bounce a message back and forth through
 * comm_send/comm_recv and report one-way latency (half the round trip) and
 * bandwidth (bytes of one direction per one-way time), median over runs.
 *   commrun -n 2 comm-pingpong [bytes ...]      (default 8 4194304 67108864)
 * Set COMM_PROVIDER=shm or tcp to pick the transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  int rank, size;
  comm_rank(&rank, world);
  comm_size(&size, world);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "comm-pingpong needs exactly 2 ranks\n");
    comm_destroy(world);
    return 2;
  }
  size_t defaults[] = {8, 4u << 20, 64u << 20};
  int nsizes = argc > 1 ? argc - 1 : 3;
  if (rank == 0) printf("%12s %10s %14s %12s\n", "bytes", "iters", "latency_us", "GB/s");
  for (int s = 0; s < nsizes; ++s) {
    size_t bytes = argc > 1 ? strtoull(argv[s + 1], NULL, 10) : defaults[s];
    char *buffer = malloc(bytes ? bytes : 1);
    memset(buffer, rank, bytes);
    int64_t n = (int64_t)bytes;
    comm_tensor_t *t = NULL;
    comm_tensor_create(&t, buffer, COMM_UINT8, 1, &n);
    int iters = bytes <= 65536 ? 2000 : bytes <= (8u << 20) ? 50 : 8;
    enum { RUNS = 7 };
    double oneWay[RUNS];
    for (int run = -1; run < RUNS; ++run) { /* run -1 warms up */
      comm_barrier(world, NULL);
      double start = now();
      for (int i = 0; i < iters; ++i) {
        if (rank == 0) {
          comm_send(world, t, 1, 0, NULL);
          comm_recv(world, t, 1, 0, NULL);
        } else {
          comm_recv(world, t, 0, 0, NULL);
          comm_send(world, t, 0, 0, NULL);
        }
      }
      if (run >= 0) oneWay[run] = (now() - start) / (2.0 * iters);
    }
    qsort(oneWay, RUNS, sizeof oneWay[0], compare);
    double median = oneWay[RUNS / 2];
    if (rank == 0) printf("%12zu %10d %14.2f %12.3f\n", bytes, iters, median * 1e6, (double)bytes / median / 1e9);
    comm_tensor_destroy(t);
    free(buffer);
  }
  comm_destroy(world);
  return 0;
}
