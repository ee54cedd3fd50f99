/* An all_reduce on every rank of the job, built against an installed comm only:
 * every rank contributes values any rank can compute, and each checks the
 * sum and the max against a reference it computes itself. */
#include <stdio.h>
#include <stdlib.h>

#include <comm.h>

#define N 1000

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, comm_last_error());
  return 1;
}

static double contribution(int rank, int i) { return rank * 1000.0 + i * 0.5; }

int main(void) {
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) return fail("comm_init");
  int rank = 0, size = 0;
  if (comm_rank(&rank, world) != COMM_OK || comm_size(&size, world) != COMM_OK) return fail("comm_rank/comm_size");

  static double sums[N];
  static int32_t maxima[N];
  for (int i = 0; i < N; ++i) {
    sums[i] = contribution(rank, i);
    maxima[i] = (int32_t)((rank * 7 + i) % 13);
  }
  int64_t n = N;
  comm_tensor_t *sum = NULL, *max = NULL;
  if (comm_tensor_create(&sum, sums, COMM_FLOAT64, 1, &n) != COMM_OK ||
      comm_tensor_create(&max, maxima, COMM_INT32, 1, &n) != COMM_OK)
    return fail("comm_tensor_create");
  if (comm_all_reduce(world, sum, sum, COMM_OP_SUM, NULL) != COMM_OK) return fail("comm_all_reduce sum");
  if (comm_all_reduce(world, max, max, COMM_OP_MAX, NULL) != COMM_OK) return fail("comm_all_reduce max");

  int wrong = 0;
  for (int i = 0; i < N; ++i) {
    double expectedSum = 0;
    int32_t expectedMax = 0;
    for (int r = 0; r < size; ++r) {
      expectedSum += contribution(r, i);
      int32_t v = (int32_t)((r * 7 + i) % 13);
      if (v > expectedMax) expectedMax = v;
    }
    if (sums[i] != expectedSum || maxima[i] != expectedMax) {
      if (wrong++ < 5)
        fprintf(stderr, "element %d: sum %g (expected %g), max %d (expected %d)\n", i, sums[i], expectedSum,
                (int)maxima[i], (int)expectedMax);
    }
  }
  comm_tensor_destroy(sum);
  comm_tensor_destroy(max);
  comm_destroy(world);
  printf("rank %d of %d: all_reduce of %d float64 (sum) and int32 (max): %s\n", rank, size, N,
         wrong == 0 ? "as the reference" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
