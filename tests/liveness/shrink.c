/* comm_shrink, comm_agree and comm_failed_ranks, each checked against what
 * the test knows happened. The last rank is the victim where one dies
 * (SIGKILL); run under commrun --keep-going. Each surviving rank prints
 * "ok" when every check held.
 *   dies           the victim dies between two all_reduces: the survivors'
 *                  call fails naming it, comm_failed_ranks lists it, they
 *                  revoke and shrink; the new communicator has the
 *                  survivors in order, its all_reduce and a split of it are
 *                  correct, and an agree on it finds no failure
 *   no_failure     a shrink with every rank alive is a copy of the world
 *   agree_dies     the victim dies instead of calling comm_agree: every
 *                  survivor gets the AND of the survivors' flags and the
 *                  victim as the one failed rank
 *   agree_revoked  rank 0 revokes the world after an agree: the next
 *                  comm_agree fails with COMM_ERR_REVOKED on every rank, a
 *                  revoke arriving during the call included, and a shrink
 *                  still works
 *   dies_in_shrink the victim calls comm_shrink and dies during it: the
 *                  survivors' shrink returns (with or without it); a second
 *                  shrink, if the first kept it, leaves the survivors alone
 * usage: shrink MODE */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "join.h"

static int rank_ = 0;

static int check(int condition, const char *what) {
  if (!condition) fprintf(stderr, "rank %d: FAILED: %s (last error: %s)\n", rank_, what, comm_last_error());
  return condition;
}

/* The sum over the members of `comm` of (world rank + 1), by all_reduce. */
static comm_status_t sum_of_world_ranks(comm_t *comm, int64_t *out) {
  int world_rank = 0, rank = 0;
  comm_rank(&rank, comm);
  comm_rank_to_world(&world_rank, comm, rank);
  int64_t value = world_rank + 1, one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_INT64, 1, &one);
  comm_status_t status = comm_all_reduce(comm, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  *out = value;
  return status;
}

/* The same sum as the test computes it: over the world ranks of `comm`. */
static int64_t expected_sum(comm_t *comm) {
  int size = 0;
  comm_size(&size, comm);
  int64_t sum = 0;
  for (int r = 0; r < size; ++r) {
    int world_rank = 0;
    comm_rank_to_world(&world_rank, comm, r);
    sum += world_rank + 1;
  }
  return sum;
}

/* `comm` holds exactly the world ranks 0..members-1, in order, and its
 * all_reduce, a split of it and an agree on it are correct. */
static int works_with(comm_t *comm, int members) {
  int ok = 1, size = 0, rank = 0;
  comm_size(&size, comm);
  comm_rank(&rank, comm);
  ok &= check(size == members, "the communicator's size");
  for (int r = 0; r < size && r < members; ++r) {
    int world_rank = -1;
    comm_rank_to_world(&world_rank, comm, r);
    ok &= check(world_rank == r, "ranks renumbered in order");
  }
  int64_t sum = 0;
  ok &= check(sum_of_world_ranks(comm, &sum) == COMM_OK && sum == expected_sum(comm), "all_reduce");
  comm_t *half = NULL;
  ok &= check(comm_split(&half, comm, rank % 2, rank, NULL) == COMM_OK, "comm_split");
  if (half != NULL) {
    ok &= check(sum_of_world_ranks(half, &sum) == COMM_OK && sum == expected_sum(half), "all_reduce of a split");
    comm_destroy(half);
  }
  uint32_t flags = 0xF0u | (uint32_t)rank;
  int failed = -1;
  ok &= check(comm_agree(&flags, &failed, NULL, 0, comm) == COMM_OK, "comm_agree");
  ok &= check(flags == 0xF0u && failed == 0, "agree's value and failed count with no failure");
  return ok;
}

static void *die_soon(void *unused) {
  (void)unused;
  struct timespec t = {0, 1000000L};
  nanosleep(&t, NULL);
  kill(getpid(), SIGKILL);
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "dies";
  int size = 0;
  comm_t *world = join_world(&rank_, &size);
  const int victim = size - 1;
  int ok = 1;
  int64_t sum = 0;
  ok &= check(sum_of_world_ranks(world, &sum) == COMM_OK && sum == expected_sum(world), "first all_reduce");
  /* Once this returns on any rank, every rank is past the first all_reduce:
   * a death or a revoke after it cannot reach into it. */
  uint32_t all = 1;
  ok &= check(comm_agree(&all, NULL, NULL, 0, world) == COMM_OK && all == 1, "comm_agree after the first all_reduce");
  comm_t *shrunk = NULL;

  if (strcmp(mode, "dies") == 0) {
    if (rank_ == victim) kill(getpid(), SIGKILL);
    comm_status_t status = sum_of_world_ranks(world, &sum);
    ok &= check(status == COMM_ERR_REMOTE || status == COMM_ERR_REVOKED, "all_reduce with a dead rank fails");
    int count = 0, failed[8] = {-1};
    ok &= check(comm_failed_ranks(&count, failed, 8, world) == COMM_OK, "comm_failed_ranks");
    ok &= check(count == 1 && failed[0] == victim, "comm_failed_ranks names the victim alone");
    ok &= check(comm_revoke(world) == COMM_OK, "comm_revoke");
    ok &= check(comm_shrink(&shrunk, world, NULL) == COMM_OK, "comm_shrink");
    if (shrunk != NULL) ok &= works_with(shrunk, size - 1);
  } else if (strcmp(mode, "no_failure") == 0) {
    ok &= check(comm_shrink(&shrunk, world, "copy") == COMM_OK, "comm_shrink");
    if (shrunk != NULL) ok &= works_with(shrunk, size);
  } else if (strcmp(mode, "agree_dies") == 0) {
    if (rank_ == victim) kill(getpid(), SIGKILL);
    uint32_t flags = ~(1u << rank_);
    int count = -1, failed[8] = {-1};
    ok &= check(comm_agree(&flags, &count, failed, 8, world) == COMM_OK, "comm_agree");
    uint32_t expected = ~0u;
    for (int r = 0; r < victim; ++r) expected &= ~(1u << r);
    ok &= check(flags == expected, "agree's value is the AND of the survivors' flags");
    ok &= check(count == 1 && failed[0] == victim, "agree's failed set is the victim");
    ok &= check(comm_shrink(&shrunk, world, NULL) == COMM_OK, "comm_shrink");
    if (shrunk != NULL) ok &= works_with(shrunk, size - 1);
  } else if (strcmp(mode, "agree_revoked") == 0) {
    uint32_t flags = 1;
    if (rank_ == 0) ok &= check(comm_revoke(world) == COMM_OK, "comm_revoke");
    comm_status_t status = comm_agree(&flags, NULL, NULL, 0, world);
    const char *expected = rank_ == 0 ? "revoked on this rank" : "revoked by rank 0";
    ok &= check(status == COMM_ERR_REVOKED && strstr(comm_last_error(), expected) != NULL &&
                    strstr(comm_last_error(), "comm_agree") != NULL,
                "comm_agree on a revoked communicator fails naming the revoke");
    ok &= check(flags == 1, "a failed comm_agree leaves flags alone");
    ok &= check(comm_shrink(&shrunk, world, NULL) == COMM_OK, "comm_shrink of a revoked communicator");
    if (shrunk != NULL) ok &= works_with(shrunk, size);
  } else if (strcmp(mode, "dies_in_shrink") == 0) {
    if (rank_ == victim) {
      pthread_t killer;
      pthread_create(&killer, NULL, die_soon, NULL);
      comm_shrink(&shrunk, world, NULL);
      pause();
    }
    ok &= check(comm_shrink(&shrunk, world, NULL) == COMM_OK, "comm_shrink while the victim dies");
    int shrunk_size = 0;
    comm_size(&shrunk_size, shrunk);
    if (shrunk_size == size) {
      /* The victim was in: the next call fails naming it, and a second shrink leaves it out. */
      comm_status_t status = sum_of_world_ranks(shrunk, &sum);
      ok &= check(status == COMM_ERR_REMOTE || status == COMM_ERR_REVOKED, "all_reduce with the dead victim fails");
      comm_t *again = NULL;
      ok &= check(comm_shrink(&again, shrunk, NULL) == COMM_OK, "second comm_shrink");
      comm_destroy(shrunk);
      shrunk = again;
    }
    if (shrunk != NULL) ok &= works_with(shrunk, size - 1);
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 1;
  }
  comm_destroy(shrunk);
  comm_destroy(world);
  if (ok) printf("rank %d: ok\n", rank_);
  return ok ? 0 : 2;
}
