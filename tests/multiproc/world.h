/* The world every multi-process test runs on: joined once by main(), read
 * by the test cases. */
#ifndef COMM_TESTS_WORLD_H
#define COMM_TESTS_WORLD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "comm.h"

static comm_t *world;
static int rank, size;

/* comm_init from the launcher's environment and this rank's place in it;
 * nonzero, after saying why, when init fails. COMM_TEST_CASES, when set,
 * is a cmocka pattern ("gather*") naming the only cases to run: a run that
 * forces one collective's algorithm takes that collective's cases. */
static int join_world(void) {
  const char *cases = getenv("COMM_TEST_CASES");
  if (cases != NULL && cases[0] != '\0') cmocka_set_test_filter(cases);
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  comm_rank(&rank, world);
  comm_size(&size, world);
  return 0;
}

/* CLOCK_MONOTONIC in seconds. The ranks of these tests share one machine and
 * so one clock: times read on different ranks compare, which lets a test
 * check the order of events across ranks without asserting how long
 * anything takes (a busy machine makes everything slower, never reorders
 * what a collective orders). */
static double monotonic_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The largest of every rank's `mine`; -1 after saying why when the
 * all_reduce fails. */
static double largest_of_all(double mine) {
  int64_t one = 1;
  double largest = -1;
  comm_tensor_t *in = NULL, *out = NULL;
  if (comm_tensor_create(&in, &mine, COMM_FLOAT64, 1, &one) != COMM_OK ||
      comm_tensor_create(&out, &largest, COMM_FLOAT64, 1, &one) != COMM_OK ||
      comm_all_reduce(world, in, out, COMM_OP_MAX, NULL) != COMM_OK) {
    fprintf(stderr, "largest_of_all: %s\n", comm_last_error());
    largest = -1;
  }
  comm_tensor_destroy(in);
  comm_tensor_destroy(out);
  return largest;
}

#endif
