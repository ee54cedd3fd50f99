/* The last rank dies by SIGKILL while every other rank waits on it; each
 * survivor must fail with COMM_ERR_REMOTE or COMM_ERR_TIMEOUT naming it
 * (peer_death.sh bounds how long the job takes). Prints "survivor ok" per
 * rank that did. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

int main(void) {
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  int rank, size;
  comm_rank(&rank, world);
  comm_size(&size, world);
  int victim = size - 1;
  if (comm_barrier(world, NULL) != COMM_OK) {
    fprintf(stderr, "rank %d: comm_barrier: %s\n", rank, comm_last_error());
    return 1;
  }
  if (rank == victim) {
    /* A send completes once the transport holds it (over tcp, the kernel),
     * so the barrier's last messages may still be on their way: a kill now
     * could drop them and fail the others' barrier instead of their wait. */
    struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    kill(getpid(), SIGKILL);
  }
  char expected[32];
  snprintf(expected, sizeof expected, "rank %d", victim);
  double value = 0;
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_FLOAT64, 1, &one);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  comm_status_t status = comm_recv(world, t, victim, 1, NULL);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  const char *message = comm_last_error();
  printf("survivor %d: %s after %.1f s: %s\n", rank, comm_status_string(status), seconds, message);
  int ok = (status == COMM_ERR_REMOTE || status == COMM_ERR_TIMEOUT) && strstr(message, expected) != NULL;
  if (ok) printf("survivor ok\n");
  fflush(stdout);
  comm_tensor_destroy(t);
  comm_destroy(world);
  return ok ? 0 : 2;
}
