/* comm_revoke on one rank stops every other live rank's operations on the
 * communicator with COMM_ERR_REVOKED naming that rank, and their later ones.
 *   blocked  the last rank revokes while the others wait in an all_reduce
 *            it never joins
 *   idle     the last rank revokes at once; the others learn of it in their
 *            next call, made later
 *   dies     the last rank revokes and kills itself (SIGKILL) right after:
 *            the others still learn of the revoke (their pending call may
 *            fail for the death first)
 * Each surviving rank checks its errors and prints "ok".
 * usage: revoke blocked|idle|dies */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "join.h"

static void nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "blocked";
  int rank = 0, size = 0;
  comm_t *world = join_world(&rank, &size);
  const int revoker = size - 1;
  if (comm_barrier(world, NULL) != COMM_OK) {
    fprintf(stderr, "rank %d: barrier: %s\n", rank, comm_last_error());
    return 1;
  }
  if (rank == revoker) {
    /* blocked, dies: the others are in their all_reduce by then; idle: they
     * are past the barrier, in no call, until 300 ms. */
    nap(strcmp(mode, "idle") == 0 ? 100 : 200);
    comm_status_t status = comm_revoke(world);
    if (status != COMM_OK) {
      fprintf(stderr, "rank %d: comm_revoke: %s\n", rank, comm_last_error());
      return 1;
    }
    if (strcmp(mode, "dies") == 0) kill(getpid(), SIGKILL);
    status = comm_barrier(world, NULL);
    int ok = status == COMM_ERR_REVOKED && strstr(comm_last_error(), "revoked on this rank") != NULL;
    printf("rank %d (revoker): later barrier: %s: %s\n", rank, comm_status_string(status), comm_last_error());
    printf(ok ? "rank %d: ok\n" : "rank %d: FAILED\n", rank);
    comm_destroy(world);
    return ok ? 0 : 2;
  }
  if (strcmp(mode, "idle") == 0) nap(300); /* in no call while the revoke arrives */
  char expected[64];
  snprintf(expected, sizeof expected, "revoked by rank %d", revoker);
  double value = rank;
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_FLOAT64, 1, &one);
  comm_status_t first = comm_all_reduce(world, t, t, COMM_OP_SUM, NULL);
  char firstMessage[512];
  snprintf(firstMessage, sizeof firstMessage, "%s", comm_last_error());
  comm_status_t later = comm_barrier(world, NULL);
  printf("rank %d: all_reduce: %s: %s\n", rank, comm_status_string(first), firstMessage);
  printf("rank %d: later barrier: %s: %s\n", rank, comm_status_string(later), comm_last_error());
  int firstOk = first == COMM_ERR_REVOKED ? strstr(firstMessage, expected) != NULL
                                          : strcmp(mode, "dies") == 0 && first == COMM_ERR_REMOTE;
  int ok = firstOk && later == COMM_ERR_REVOKED && strstr(comm_last_error(), expected) != NULL;
  printf(ok ? "rank %d: ok\n" : "rank %d: FAILED\n", rank);
  comm_tensor_destroy(t);
  comm_destroy(world);
  return ok ? 0 : 2;
}
