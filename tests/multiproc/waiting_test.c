/* Waiting through commrun at any rank count, over shm or tcp: ranks blocked
 * on a late peer give their cores back, in a collective and in a receive,
 * and still return with the right result once the peer comes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "comm.h"
#include "world.h"

#define OK(call)                                                                     \
  do {                                                                               \
    comm_status_t status_ = (call);                                                  \
    if (status_ != COMM_OK) print_message("rank %d: %s\n", rank, comm_last_error()); \
    assert_int_equal(status_, COMM_OK);                                              \
  } while (0)

/* How late the last rank comes: long enough that a waiter that never
 * stopped spinning would show. */
enum { kLateMicroseconds = 400 * 1000 };
/* The share of the wait a waiter may keep a CPU busy. Napping waiters use
 * a few percent on this VM; one that spins uses all of it. */
static const double kMostBusy = 0.25;
/* CPU time below which no wait counts as spinning: on a busy machine a
 * waiter may be scheduled only after the late rank has come, and then its
 * "wait" is the collective's own work, of which any share may be CPU. */
static const double kSpinSeconds = 0.05;

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs `wait_for_late` on every rank, the last one after sleeping (not
 * spinning) kLateMicroseconds; checks that every other rank's process,
 * all its threads together, was busy for at most kMostBusy of its wait. */
static void check_waiters_idle(void (*wait_for_late)(void), const char *what) {
  if (size < 2) skip();
  OK(comm_barrier(world, NULL));
  const int late = rank == size - 1;
  if (late) usleep(kLateMicroseconds);
  const double start = seconds(CLOCK_MONOTONIC), start_cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
  wait_for_late();
  const double end = seconds(CLOCK_MONOTONIC);
  const double wall = end - start, cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
  /* The ranks share this machine's clock: the late rank's start is the
   * latest, and every waiter must have waited for it. */
  const double late_start = largest_of_all(start);
  if (late) return;
  print_message("rank %d, %s: waited %.3f s, CPU busy %.0f%% of it\n", rank, what, wall, 100 * cpu / wall);
  if (end < late_start) fail_msg("rank %d, %s: done %.6f s before the late rank began", rank, what, late_start - end);
  if (cpu > kMostBusy * wall && cpu > kSpinSeconds) {
    fail_msg("rank %d kept a CPU busy %.0f%% of its %.3f s %s", rank, 100 * cpu / wall, wall, what);
  }
}

static void all_reduce_with_late_rank(void) {
  int64_t one = 1;
  int32_t mine = rank + 1, sum = 0;
  comm_tensor_t *in = NULL, *out = NULL;
  OK(comm_tensor_create(&in, &mine, COMM_INT32, 1, &one));
  OK(comm_tensor_create(&out, &sum, COMM_INT32, 1, &one));
  OK(comm_all_reduce(world, in, out, COMM_OP_SUM, NULL));
  assert_int_equal(sum, size * (size + 1) / 2);
  comm_tensor_destroy(in);
  comm_tensor_destroy(out);
}

/* Rank 0 receives from the late rank, which sends once it comes. */
static void receive_from_late_rank(void) {
  int64_t one = 1;
  int32_t value = -1;
  comm_tensor_t *t = NULL;
  OK(comm_tensor_create(&t, &value, COMM_INT32, 1, &one));
  if (rank == size - 1) {
    value = 4242;
    OK(comm_send(world, t, 0, 7, NULL));
  } else if (rank == 0) {
    OK(comm_recv(world, t, size - 1, 7, NULL));
    assert_int_equal(value, 4242);
  }
  comm_tensor_destroy(t);
  OK(comm_barrier(world, NULL)); /* the others wait here */
}

static void a_collective_waiting_for_a_late_rank_gives_its_core_back(void **state) {
  (void)state;
  check_waiters_idle(all_reduce_with_late_rank, "all_reduce");
}

static void a_receive_waiting_for_a_late_rank_gives_its_core_back(void **state) {
  (void)state;
  check_waiters_idle(receive_from_late_rank, "receive");
}

int main(void) {
  if (join_world() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_collective_waiting_for_a_late_rank_gives_its_core_back),
      cmocka_unit_test(a_receive_waiting_for_a_late_rank_gives_its_core_back),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
