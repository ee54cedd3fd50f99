/* The engine's own work per call: rounds of blocking comm_all_reduce of 2
 * float32 in place, each round printing nanoseconds per call. On one rank
 * there is no peer to wait for, so what is left is the C entry point's
 * checks, the launch and the algorithm's bookkeeping (docs/performance.md).
 * usage: commrun -n 1 comm-per-call [CALLS] [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comm.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 1000000;
  const int rounds = argc > 2 ? atoi(argv[2]) : 5;
  comm_t *world = NULL;
  if (calls < 1 || rounds < 1 || comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm-per-call: %s\n",
            calls < 1 || rounds < 1 ? "CALLS and ROUNDS must be positive" : comm_last_error());
    return 1;
  }
  float values[2] = {1, 2};
  int64_t count = 2;
  comm_tensor_t *tensor = NULL;
  comm_tensor_create(&tensor, values, COMM_FLOAT32, 1, &count);
  for (int round = 0; round < rounds; ++round) {
    const double start = now();
    for (int i = 0; i < calls; ++i) {
      if (comm_all_reduce(world, tensor, tensor, COMM_OP_SUM, NULL) != COMM_OK) {
        fprintf(stderr, "comm-per-call: %s\n", comm_last_error());
        return 1;
      }
    }
    printf("%.1f ns per call\n", (now() - start) / calls * 1e9);
  }
  comm_tensor_destroy(tensor);
  comm_destroy(world);
  return 0;
}
