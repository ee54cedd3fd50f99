/* Communicators made without blocking, through commrun at any rank count
 * over shm, tcp and tcp;ofi_rxm: comm_split_async while collectives run on
 * the parent, comm_group_create_async, COMM_UNDEFINED, comm_shrink_async;
 * every result checked by an all_reduce of world ranks against the sum the
 * test computes. Misuse: a call on a communicator still being made, a
 * second making from the same parent meanwhile, and comm_abort of one that
 * waits for a rank that comes late, which ends the wait at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "comm.h"
#include "data_patterns.h"
#include "world.h"

/* The sum over the members of `comm` of their world ranks, by all_reduce. */
static int64_t sum_of_world_ranks(comm_t *comm) {
  int64_t value = rank;
  comm_tensor_t *t = tensor(&value, COMM_INT64, 1, 1);
  OK(comm_all_reduce(comm, t, t, COMM_OP_SUM, NULL));
  comm_tensor_destroy(t);
  return value;
}

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* A call on `comm` while its making may still run: either it is made and
 * the call works, or the call says it is still being made. */
static void call_while_made(comm_t *comm) {
  int n = -1;
  comm_status_t status = comm_size(&n, comm);
  if (status != COMM_OK) {
    assert_int_equal(status, COMM_ERR_INVALID_USAGE);
    assert_non_null(strstr(comm_last_error(), "still being made"));
  }
}

static void split_overlaps_collectives(void **state) {
  (void)state;
  comm_t *half = NULL;
  comm_handle_t *handle = NULL;
  OK(comm_split_async(&half, world, rank % 2, rank, "half", &handle));
  assert_non_null(half);
  call_while_made(half);
  /* Collectives on the parent go on meanwhile. */
  for (int i = 0; i < 3; ++i) assert_int_equal(sum_of_world_ranks(world), (int64_t)size * (size - 1) / 2);
  OK(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(handle));
  int64_t expected = 0;
  for (int r = rank % 2; r < size; r += 2) expected += r;
  assert_int_equal(sum_of_world_ranks(half), expected);
  OK(comm_destroy(half));
}

static void group_reversed(void **state) {
  (void)state;
  int members[64];
  for (int i = 0; i < size; ++i) members[i] = size - 1 - i;
  comm_t *group = NULL;
  comm_handle_t *handle = NULL;
  OK(comm_group_create_async(&group, world, size, members, NULL, &handle));
  OK(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(handle));
  int grank = -1;
  OK(comm_rank(&grank, group));
  assert_int_equal(grank, size - 1 - rank);
  assert_int_equal(sum_of_world_ranks(group), (int64_t)size * (size - 1) / 2);
  OK(comm_destroy(group));
}

static void undefined_colour_gets_null(void **state) {
  (void)state;
  comm_t *even = NULL;
  comm_handle_t *handle = NULL;
  OK(comm_split_async(&even, world, rank % 2 == 0 ? 0 : COMM_UNDEFINED, 0, NULL, &handle));
  OK(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(handle));
  if (rank % 2 != 0) {
    assert_null(even);
    return;
  }
  int64_t expected = 0;
  for (int r = 0; r < size; r += 2) expected += r;
  assert_int_equal(sum_of_world_ranks(even), expected);
  OK(comm_destroy(even));
}

static void shrink_without_failure(void **state) {
  (void)state;
  comm_t *copy = NULL;
  comm_handle_t *handle = NULL;
  OK(comm_shrink_async(&copy, world, "copy", &handle));
  OK(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(handle));
  assert_int_equal(sum_of_world_ranks(copy), (int64_t)size * (size - 1) / 2);
  OK(comm_destroy(copy));
}

static void bad_input(void **state) {
  (void)state;
  comm_t *out = NULL;
  assert_int_equal(comm_split_async(&out, world, 0, 0, NULL, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(comm_last_error(), "handle"));
  assert_null(out);
  comm_handle_t *handle = NULL;
  assert_int_equal(comm_split_async(NULL, world, 0, 0, NULL, &handle), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_init_async(&out, NULL, NULL), COMM_ERR_INVALID_ARGUMENT);
}

/* Rank 0 comes late to a group of every rank: the others' making cannot
 * end before it comes, so a second making from the world fails meanwhile;
 * then they abort theirs, whose handle completes at once. Rank 0 joins
 * last, blocking, which lets the abandoned makings end too. */
static void abort_while_waiting(void **state) {
  (void)state;
  if (size < 2) skip();
  int members[64];
  for (int i = 0; i < size; ++i) members[i] = i;
  if (rank != 0) {
    comm_t *group = NULL;
    comm_handle_t *handle = NULL;
    OK(comm_group_create_async(&group, world, size, members, NULL, &handle));
    assert_int_equal(comm_handle_test(handle), COMM_IN_PROGRESS);
    comm_t *other = NULL;
    comm_handle_t *other_handle = NULL;
    assert_int_equal(comm_split_async(&other, world, 0, 0, NULL, &other_handle), COMM_ERR_INVALID_USAGE);
    assert_non_null(strstr(comm_last_error(), "another communicator is being made"));
    assert_int_equal(comm_group_create(&other, world, size, members, NULL), COMM_ERR_INVALID_USAGE);
    OK(comm_abort(group));
    assert_int_equal(comm_handle_wait(handle, 1000), COMM_ERR_ABORTED);
    assert_non_null(strstr(comm_last_error(), "aborted while it was being made"));
    int n = 0;
    assert_int_equal(comm_size(&n, group), COMM_ERR_INVALID_USAGE);
    OK(comm_handle_destroy(handle));
    OK(comm_destroy(group));
  } else {
    nap_ms(300);
  }
  if (rank == 0) {
    comm_t *group = NULL;
    OK(comm_group_create(&group, world, size, members, NULL));
    OK(comm_destroy(group));
  }
  /* The others stay until rank 0's group is made: it needs their abandoned makings. */
  assert_int_equal(sum_of_world_ranks(world), (int64_t)size * (size - 1) / 2);
}

int main(void) {
  if (join_world() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_overlaps_collectives),
      cmocka_unit_test(group_reversed),
      cmocka_unit_test(undefined_colour_gets_null),
      cmocka_unit_test(shrink_without_failure),
      cmocka_unit_test(bad_input),
      cmocka_unit_test(abort_while_waiting),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
