/* comm_tensor_set_memory fails at the call that is wrong: CUDA memory in a
 * build without CUDA is COMM_ERR_NOT_SUPPORTED there (not later, in the
 * collective), and in a build with CUDA a device that does not exist is an
 * error too. The descriptor is unchanged after a failure. Single rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static float data[4];

static void expect_unchanged(const comm_tensor_t *t) {
  comm_memory_type_t type = COMM_MEMORY_CUDA;
  int device = -1;
  assert_int_equal(comm_tensor_memory(&type, &device, t), COMM_OK);
  assert_int_equal(type, COMM_MEMORY_HOST);
  assert_int_equal(device, 0);
}

static void expect_named_failure(comm_status_t status, comm_status_t expected) {
  assert_int_equal(status, expected);
  const char *message = comm_last_error();
  if (strstr(message, "comm_tensor_set_memory") == NULL || strstr(message, "CUDA") == NULL) {
    fail_msg("expected a message naming comm_tensor_set_memory and CUDA, got \"%s\"", message);
  }
}

static void cuda_memory_fails_at_set_memory(void **state) {
  (void)state;
  int64_t four = 4;
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, data, COMM_FLOAT32, 1, &four), COMM_OK);
  int cuda = 0;
  assert_int_equal(comm_has_feature(&cuda, COMM_FEATURE_CUDA), COMM_OK);
  if (!cuda) {
    expect_named_failure(comm_tensor_set_memory(t, COMM_MEMORY_CUDA, 0), COMM_ERR_NOT_SUPPORTED);
    expect_unchanged(t);
  }
  /* No machine that runs this test has 58 GPUs. */
  expect_named_failure(comm_tensor_set_memory(t, COMM_MEMORY_CUDA, 57),
                       cuda ? COMM_ERR_INVALID_ARGUMENT : COMM_ERR_NOT_SUPPORTED);
  expect_unchanged(t);
  assert_int_equal(comm_tensor_set_memory(t, COMM_MEMORY_HOST, 0), COMM_OK);
  comm_tensor_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_memory_fails_at_set_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
