/* The recovery comm offers today: the last rank dies (SIGKILL) between two
 * all_reduces; each survivor's all_reduce fails naming it, the survivors
 * revoke the world, make a group of themselves (comm_group_create, which
 * only its members call), and their next all_reduce on it is correct.
 * Run under commrun --keep-going; each survivor prints "ok". */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "join.h"

static int sum_over(comm_t *comm, double value, double *out) {
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_FLOAT64, 1, &one);
  comm_status_t status = comm_all_reduce(comm, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  *out = value;
  return status;
}

int main(void) {
  int rank = 0, size = 0;
  comm_t *world = join_world(&rank, &size);
  const int victim = size - 1;
  double sum = 0;
  if (sum_over(world, rank + 1, &sum) != COMM_OK || sum != size * (size + 1) / 2.0) {
    fprintf(stderr, "rank %d: first all_reduce: %s (%g)\n", rank, comm_last_error(), sum);
    return 1;
  }
  if (rank == victim) kill(getpid(), SIGKILL);

  comm_status_t status = sum_over(world, rank + 1, &sum);
  char expected[32];
  snprintf(expected, sizeof expected, "rank %d", victim);
  printf("rank %d: all_reduce with a dead rank: %s: %s\n", rank, comm_status_string(status), comm_last_error());
  int ok = (status == COMM_ERR_REMOTE || status == COMM_ERR_REVOKED) && strstr(comm_last_error(), expected) != NULL;
  if (comm_revoke(world) != COMM_OK) ok = 0;

  int survivors[64];
  for (int r = 0; r < victim; ++r) survivors[r] = r;
  comm_t *group = NULL;
  if (comm_group_create(&group, world, victim, survivors, "survivors") != COMM_OK) {
    fprintf(stderr, "rank %d: comm_group_create: %s\n", rank, comm_last_error());
    return 1;
  }
  status = sum_over(group, rank + 1, &sum);
  const double expected_sum = victim * (victim + 1) / 2.0;
  printf("rank %d: all_reduce of the survivors: %s, %g (expected %g)%s%s\n", rank, comm_status_string(status), sum,
         expected_sum, status == COMM_OK ? "" : ": ", status == COMM_OK ? "" : comm_last_error());
  ok = ok && status == COMM_OK && sum == expected_sum;
  comm_destroy(group);
  comm_destroy(world);
  if (ok) printf("rank %d: ok\n", rank);
  return ok ? 0 : 2;
}
