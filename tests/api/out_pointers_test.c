/* comm.h's rule for out-parameters on failure: a pointer out-parameter (an
 * object from a create call, a handle, a string or a data pointer) is set
 * to NULL, so that a caller who ignores the status holds no stale or
 * uninitialised pointer; a scalar out-parameter is left unchanged. Runs as
 * a single-rank world. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "comm.h"

static comm_t *world;
static char stale; /* what every pointer out-parameter holds before the call */
#define STALE ((void *)&stale)

static void create_calls_set_out_to_null_on_failure(void **state) {
  (void)state;
  float data[4];
  const int64_t bad_shape[1] = {-1};
  comm_tensor_t *tensor = STALE;
  assert_int_equal(comm_tensor_create(&tensor, data, COMM_FLOAT32, 1, bad_shape), COMM_ERR_INVALID_ARGUMENT);
  assert_null(tensor);
  tensor = STALE;
  assert_int_equal(comm_tensor_create(&tensor, data, (comm_dtype_t)99, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(tensor);

  comm_config_t *config = NULL;
  assert_int_equal(comm_config_create(&config), COMM_OK);
  assert_int_equal(comm_config_set(config, "algo", "no_such_collective:ring"), COMM_OK);
  comm_t *made = STALE;
  assert_int_equal(comm_init(&made, config), COMM_ERR_INVALID_ARGUMENT);
  assert_null(made);
  comm_config_destroy(config);

  comm_t *group = STALE;
  assert_int_equal(comm_group_create(&group, world, 1, (const int[]){7}, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(group);
  group = STALE;
  assert_int_equal(comm_group_create(&group, NULL, 1, (const int[]){0}, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(group);
  group = STALE;
  assert_int_equal(comm_split(&group, world, -5, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(group);
}

static void handles_strings_and_data_pointers_are_set_to_null(void **state) {
  (void)state;
  comm_handle_t *handle = STALE;
  assert_int_equal(comm_barrier(NULL, &handle), COMM_ERR_INVALID_ARGUMENT);
  assert_null(handle);
  handle = STALE;
  assert_int_equal(comm_all_reduce(world, NULL, NULL, COMM_OP_SUM, &handle), COMM_ERR_INVALID_ARGUMENT);
  assert_null(handle);
  handle = STALE;
  assert_int_equal(comm_send(world, NULL, 0, 0, &handle), COMM_ERR_INVALID_ARGUMENT);
  assert_null(handle);
  handle = STALE;
  assert_int_equal(comm_batch_start(world, NULL, &handle), COMM_ERR_INVALID_ARGUMENT);
  assert_null(handle);

  const char *name = STALE;
  assert_int_equal(comm_name(&name, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(name);
  void *data = STALE;
  assert_int_equal(comm_tensor_data(&data, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(data);
}

static void scalar_out_parameters_are_left_unchanged(void **state) {
  (void)state;
  int rank = 42;
  assert_int_equal(comm_rank(&rank, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(rank, 42);
  int64_t ms = 42;
  assert_int_equal(comm_timeout(&ms, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(ms, 42);
}

static int setup(void **state) {
  (void)state;
  return comm_init(&world, NULL) == COMM_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return comm_destroy(world) == COMM_OK ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_calls_set_out_to_null_on_failure),
      cmocka_unit_test(handles_strings_and_data_pointers_are_set_to_null),
      cmocka_unit_test(scalar_out_parameters_are_left_unchanged),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
