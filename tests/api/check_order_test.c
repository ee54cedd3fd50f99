/* A call with several faults reports the first one its collective checks:
 * each collective checks its arguments in a fixed order (the rows of
 * src/api/collective_checks.h), which these cases pin down. Runs as a
 * single-rank world. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static comm_t *world;
static float fdata[16], gdata[16];
static int32_t idata[16];
static comm_tensor_t *f32x4, *f32x8, *f32x3, *i32x4, *i32x3, *f32x4_shifted;

static comm_tensor_t *make(void *data, comm_dtype_t dtype, int64_t n) {
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, data, dtype, 1, &n), COMM_OK);
  return t;
}

static void expect(comm_status_t status, const char *call, const char *cause) {
  assert_int_equal(status, COMM_ERR_INVALID_ARGUMENT);
  const char *message = comm_last_error();
  if (strstr(message, call) == NULL || strstr(message, cause) == NULL) {
    fail_msg("expected a message naming %s and \"%s\", got \"%s\"", call, cause, message);
  }
}

static void tensors_before_op(void **state) {
  (void)state;
  expect(comm_all_reduce(world, f32x4, NULL, (comm_op_t)77, NULL), "comm_all_reduce", "out is NULL");
  expect(comm_all_reduce(world, f32x4, i32x3, (comm_op_t)77, NULL), "comm_all_reduce", "int32");
  expect(comm_all_reduce(world, f32x4, f32x3, (comm_op_t)77, NULL), "comm_all_reduce", "elements");
}

static void reduce_checks_op_before_the_roots_out(void **state) {
  (void)state;
  expect(comm_reduce(world, f32x4, NULL, (comm_op_t)77, 0, NULL), "comm_reduce", "not a comm_op_t");
  expect(comm_reduce(world, f32x4, NULL, COMM_OP_SUM, 0, NULL), "comm_reduce", "out (on the root) is NULL");
}

static void reduce_scatter_checks_rows_before_op_and_its_v_form_op_first(void **state) {
  (void)state;
  expect(comm_reduce_scatter(world, f32x4, f32x8, COMM_OP_BAND, NULL), "comm_reduce_scatter", "rows");
  const int64_t four[1] = {4};
  expect(comm_reduce_scatter_v(world, f32x8, f32x4, four, COMM_OP_BAND, NULL), "comm_reduce_scatter_v", "band");
}

static void v_collectives_check_counts_before_the_roots_tensor(void **state) {
  (void)state;
  expect(comm_gather_v(world, f32x4, NULL, NULL, 0, NULL), "comm_gather_v", "counts is NULL");
  const int64_t three[1] = {3};
  expect(comm_scatter_v(world, NULL, f32x4, three, 0, NULL), "comm_scatter_v", "counts[rank]");
  expect(comm_all_gather_v(world, f32x3, i32x4, three, NULL), "comm_all_gather_v", "int32");
}

static void broadcast_and_all_to_all_single(void **state) {
  (void)state;
  expect(comm_broadcast(world, NULL, NULL, 0, NULL), "comm_broadcast", "in (on the root) is NULL");
  const int64_t negative[1] = {-1};
  expect(comm_all_to_all_single(world, f32x4, f32x4_shifted, negative, NULL, NULL), "comm_all_to_all_single",
         "overlap");
}

static int setup(void **state) {
  (void)state;
  if (comm_init(&world, NULL) != COMM_OK) return -1;
  f32x4 = make(fdata, COMM_FLOAT32, 4);
  f32x8 = make(gdata, COMM_FLOAT32, 8);
  f32x3 = make(gdata + 8, COMM_FLOAT32, 3);
  i32x4 = make(idata, COMM_INT32, 4);
  i32x3 = make(idata + 4, COMM_INT32, 3);
  f32x4_shifted = make(fdata + 1, COMM_FLOAT32, 4);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  comm_tensor_t *all[] = {f32x4, f32x8, f32x3, i32x4, i32x3, f32x4_shifted};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) comm_tensor_destroy(all[i]);
  return comm_destroy(world) == COMM_OK ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tensors_before_op),
      cmocka_unit_test(reduce_checks_op_before_the_roots_out),
      cmocka_unit_test(reduce_scatter_checks_rows_before_op_and_its_v_form_op_first),
      cmocka_unit_test(v_collectives_check_counts_before_the_roots_tensor),
      cmocka_unit_test(broadcast_and_all_to_all_single),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
