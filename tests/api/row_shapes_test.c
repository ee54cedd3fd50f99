/* The collectives that comm.h describes in rows check rows, not element
 * counts: dim 0 holds the stated number of rows and the dims after it
 * agree. Runs as a single-rank world, where "size x in's rows" is in's rows;
 * every wrong pair below has the right element count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static comm_t *world;
static float a[24], b[24];

static comm_tensor_t *make(float *data, int ndim, const int64_t *shape) {
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, data, COMM_FLOAT32, ndim, shape), COMM_OK);
  return t;
}

/* [6, 2] and the shapes of 12 elements whose rows are not [2]-rows. */
static comm_tensor_t *in6x2, *out4x3, *out12, *out6x2;

static void expect_rows_error(comm_status_t status, const char *call) {
  assert_int_equal(status, COMM_ERR_INVALID_ARGUMENT);
  const char *message = comm_last_error();
  if (strstr(message, call) == NULL || strstr(message, "rows") == NULL) {
    fail_msg("expected a message naming %s and rows, got \"%s\"", call, message);
  }
}

static void even_collectives_check_rows(void **state) {
  (void)state;
  comm_tensor_t *wrong[] = {out4x3, out12};
  for (size_t w = 0; w < 2; ++w) {
    expect_rows_error(comm_all_gather(world, in6x2, wrong[w], NULL), "comm_all_gather");
    expect_rows_error(comm_reduce_scatter(world, wrong[w], in6x2, COMM_OP_SUM, NULL), "comm_reduce_scatter");
    expect_rows_error(comm_gather(world, in6x2, wrong[w], 0, NULL), "comm_gather");
    expect_rows_error(comm_scatter(world, wrong[w], in6x2, 0, NULL), "comm_scatter");
  }
}

static void uneven_collectives_check_rows(void **state) {
  (void)state;
  const int64_t six[1] = {6}, twelve[1] = {12};
  expect_rows_error(comm_all_gather_v(world, in6x2, out4x3, six, NULL), "comm_all_gather_v");
  expect_rows_error(comm_reduce_scatter_v(world, out4x3, in6x2, six, COMM_OP_SUM, NULL), "comm_reduce_scatter_v");
  expect_rows_error(comm_gather_v(world, in6x2, out4x3, six, 0, NULL), "comm_gather_v");
  expect_rows_error(comm_scatter_v(world, out4x3, in6x2, six, 0, NULL), "comm_scatter_v");
  /* counts in rows, not elements: 12 rows of a [6, 2] tensor do not exist. */
  expect_rows_error(comm_all_gather_v(world, in6x2, out12, twelve, NULL), "comm_all_gather_v");
  expect_rows_error(comm_gather_v(world, in6x2, out6x2, twelve, 0, NULL), "comm_gather_v");
}

static void all_to_all_single_checks_row_dims(void **state) {
  (void)state;
  const int64_t s223[3] = {2, 2, 3}, s232[3] = {2, 3, 2};
  comm_tensor_t *in = make(a, 3, s223), *out = make(b, 3, s232);
  expect_rows_error(comm_all_to_all_single(world, in, out, NULL, NULL, NULL), "comm_all_to_all_single");
  comm_tensor_destroy(in);
  comm_tensor_destroy(out);
}

/* The documented shapes still work, and move the data. */
static void matching_rows_are_accepted(void **state) {
  (void)state;
  for (int i = 0; i < 12; ++i) a[i] = (float)i;
  memset(b, 0, sizeof b);
  assert_int_equal(comm_all_gather(world, in6x2, out6x2, NULL), COMM_OK);
  assert_memory_equal(a, b, 12 * sizeof(float));
  const int64_t one = 1;
  comm_tensor_t *scalar = make(a, 0, NULL), *vector = make(b + 12, 1, &one);
  assert_int_equal(comm_all_gather(world, scalar, vector, NULL), COMM_OK);
  assert_true(b[12] == a[0]);
  assert_int_equal(comm_reduce_scatter(world, vector, scalar, COMM_OP_SUM, NULL), COMM_OK);
  comm_tensor_destroy(scalar);
  comm_tensor_destroy(vector);
}

static int setup(void **state) {
  (void)state;
  const int64_t s62[2] = {6, 2}, s43[2] = {4, 3}, s12[1] = {12};
  if (comm_init(&world, NULL) != COMM_OK) return -1;
  in6x2 = make(a, 2, s62);
  out4x3 = make(b, 2, s43);
  out12 = make(b, 1, s12);
  out6x2 = make(b, 2, s62);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  comm_tensor_destroy(in6x2);
  comm_tensor_destroy(out4x3);
  comm_tensor_destroy(out12);
  comm_tensor_destroy(out6x2);
  return comm_destroy(world) == COMM_OK ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(even_collectives_check_rows),
      cmocka_unit_test(uneven_collectives_check_rows),
      cmocka_unit_test(all_to_all_single_checks_row_dims),
      cmocka_unit_test(matching_rows_are_accepted),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
