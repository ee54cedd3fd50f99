/* comm_init_async, through commrun:
 *   overlap  every rank starts joining, works (a checksum loop) until the
 *            handle completes, then checks an all_reduce; prints how much
 *            work it did while joining
 *   abort    rank 0 starts joining a world whose other ranks never come,
 *            aborts after 100 ms: the handle completes with COMM_ERR_ABORTED
 *            at once, calls on the communicator say it was not made, and it
 *            can be destroyed; the others exit without joining
 * Each rank that checked something prints "ok".
 * usage: init_async overlap|abort */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int overlap(void) {
  comm_t *world = NULL;
  comm_handle_t *joined = NULL;
  if (comm_init_async(&world, NULL, &joined) != COMM_OK) {
    fprintf(stderr, "comm_init_async: %s\n", comm_last_error());
    return 1;
  }
  uint64_t work = 0, checksum = 0;
  comm_status_t status;
  while ((status = comm_handle_test(joined)) == COMM_IN_PROGRESS) {
    for (int i = 0; i < 100000; ++i) checksum = checksum * 6364136223846793005ull + (uint64_t)i;
    ++work;
  }
  if (status != COMM_OK) {
    fprintf(stderr, "joining: %s\n", comm_last_error());
    return 1;
  }
  comm_handle_destroy(joined);
  int rank = 0, size = 0;
  comm_rank(&rank, world);
  comm_size(&size, world);
  int64_t value = rank, one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_INT64, 1, &one);
  status = comm_all_reduce(world, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  const int ok = status == COMM_OK && value == (int64_t)size * (size - 1) / 2;
  printf("rank %d: %llu units of work while joining (checksum %llx)%s\n", rank, (unsigned long long)work,
         (unsigned long long)checksum, ok ? ": ok" : ": FAILED");
  comm_destroy(world);
  return ok ? 0 : 2;
}

static int abort_joining(void) {
  const char *rank = getenv("COMM_RANK");
  if (rank == NULL || strcmp(rank, "0") != 0) return 0; /* never joins */
  comm_t *world = NULL;
  comm_handle_t *joined = NULL;
  if (comm_init_async(&world, NULL, &joined) != COMM_OK) return 1;
  struct timespec nap = {0, 100000000L};
  nanosleep(&nap, NULL);
  int ok = comm_handle_test(joined) == COMM_IN_PROGRESS;
  const double start = seconds();
  ok = ok && comm_abort(world) == COMM_OK;
  ok = ok && comm_handle_wait(joined, 5000) == COMM_ERR_ABORTED &&
       strstr(comm_last_error(), "aborted while it was being made") != NULL;
  const double waited = seconds() - start;
  int n = 0;
  ok = ok && comm_size(&n, world) == COMM_ERR_INVALID_USAGE && strstr(comm_last_error(), "was not made") != NULL;
  ok = ok && comm_handle_destroy(joined) == COMM_OK && comm_destroy(world) == COMM_OK;
  printf("rank 0: abort ended the wait after %.3f s%s\n", waited, ok ? ": ok" : ": FAILED");
  return ok ? 0 : 2;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "abort") == 0) return abort_joining();
  return overlap();
}
