/* How long a survivor's all_reduce takes to fail when the last rank dies
 * (kill -9), hangs, or skips the all_reduce to wait for a message that
 * never comes. usage: deadline dead|hung|skip COUNT
 * The survivors print "survivor <status> after <seconds> s (failed rank
 * <comm_failed_rank>): <message>"; deadline.sh bounds the seconds,
 * failed_rank.sh checks whom they blame, hang_report.sh reads the flight
 * records.
 * The hung rank sleeps through its peers' deadline and then exits quietly;
 * the skipping one fails its receive at its own deadline. The dying rank
 * leaves the opening barrier before some of the others may have: a
 * survivor whose barrier fails for it reports that failure instead. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Prints the survivor line for a call that returned `status` after
 * `seconds`; returns the exit status: 0 for a failure, 3 for success. */
static int report(comm_t *world, comm_status_t status, double seconds) {
  /* Copied before the next call replaces it. */
  char message[4096];
  snprintf(message, sizeof message, "%s", comm_last_error());
  int failed = -2;
  comm_failed_rank(&failed, world);
  printf("survivor %s after %.2f s (failed rank %d): %s\n", comm_status_string(status), seconds, failed, message);
  fflush(stdout);
  return status == COMM_OK ? 3 : 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "dead") != 0 && strcmp(argv[1], "hung") != 0 && strcmp(argv[1], "skip") != 0)) {
    fprintf(stderr, "usage: deadline dead|hung|skip COUNT\n");
    return 2;
  }
  const int dies = strcmp(argv[1], "dead") == 0;
  const int skips = strcmp(argv[1], "skip") == 0;
  const int64_t count = atoll(argv[2]);
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  int rank, size;
  comm_rank(&rank, world);
  comm_size(&size, world);
  const double barrier_start = now();
  const comm_status_t barrier = comm_barrier(world, NULL);
  if (barrier != COMM_OK && dies && rank != size - 1) {
    const int exit_status = report(world, barrier, now() - barrier_start);
    comm_destroy(world);
    return exit_status;
  }
  if (barrier != COMM_OK) {
    fprintf(stderr, "rank %d: comm_barrier: %s\n", rank, comm_last_error());
    return 1;
  }
  if (rank == size - 1 && skips) {
    double value = 0;
    int64_t one = 1;
    comm_tensor_t *t = NULL;
    comm_tensor_create(&t, &value, COMM_FLOAT64, 1, &one);
    comm_status_t status = comm_recv(world, t, 0, 1, NULL);
    printf("skipper %s: %s\n", comm_status_string(status), comm_last_error());
    comm_tensor_destroy(t);
    comm_destroy(world);
    return status == COMM_OK ? 3 : 0;
  }
  if (rank == size - 1) {
    if (dies) kill(getpid(), SIGKILL);
    /* Hung: it never joins the all_reduce; it outlives its peers' deadline. */
    const char *timeout = getenv("COMM_TIMEOUT");
    sleep((unsigned)(timeout ? atoi(timeout) : 60) + 3);
    comm_destroy(world);
    return 0;
  }
  double *values = calloc((size_t)count, sizeof *values);
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, values, COMM_FLOAT64, 1, &count);
  const double start = now();
  comm_status_t status = comm_all_reduce(world, t, t, COMM_OP_SUM, NULL);
  const int exit_status = report(world, status, now() - start);
  comm_tensor_destroy(t);
  free(values);
  comm_destroy(world);
  return exit_status;
}
