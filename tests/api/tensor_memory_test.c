/* comm_tensor_set_memory fails at the call that is wrong: CUDA memory in a
 * build without CUDA, or on a machine where no CUDA device is visible (this
 * one: no GPU, no driver), is COMM_ERR_NOT_SUPPORTED there (not later, in
 * the collective) with the CUDA runtime's reason, and a device that does not
 * exist is COMM_ERR_INVALID_ARGUMENT. The descriptor is unchanged after a
 * failure. comm_cuda_device_count agrees with all that, and comm_set_stream
 * refuses a stream where no device is visible. Single rank. */
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

static void expect_named_failure(comm_status_t status, comm_status_t expected, const char *call, const char *cause) {
  assert_int_equal(status, expected);
  const char *message = comm_last_error();
  if (strstr(message, call) == NULL || strstr(message, cause) == NULL) {
    fail_msg("expected a message naming %s and \"%s\", got \"%s\"", call, cause, message);
  }
}

/* What a build and machine without CUDA devices say, and where. */
static const char *no_device_cause(int cuda) {
  return cuda ? "no CUDA device visible: cudaGetDeviceCount" : "needs a build of comm with CUDA";
}

static void cuda_memory_fails_at_set_memory(void **state) {
  (void)state;
  int64_t four = 4;
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, data, COMM_FLOAT32, 1, &four), COMM_OK);
  int cuda = 0, devices = -1;
  const char *reason = NULL;
  assert_int_equal(comm_has_feature(&cuda, COMM_FEATURE_CUDA), COMM_OK);
  assert_int_equal(comm_cuda_device_count(&devices, &reason), COMM_OK);
  assert_non_null(reason);
  print_message("CUDA built in: %d; devices visible: %d%s%s\n", cuda, devices, *reason ? ": " : "", reason);
  assert_true(devices >= 0);
  assert_true(cuda || devices == 0);
  assert_true((devices == 0) == (*reason != '\0'));
  if (devices == 0) {
    expect_named_failure(comm_tensor_set_memory(t, COMM_MEMORY_CUDA, 0), COMM_ERR_NOT_SUPPORTED,
                         "comm_tensor_set_memory", no_device_cause(cuda));
    expect_unchanged(t);
  }
  /* No machine that runs this test has 58 GPUs. */
  expect_named_failure(comm_tensor_set_memory(t, COMM_MEMORY_CUDA, 57),
                       devices > 0 ? COMM_ERR_INVALID_ARGUMENT : COMM_ERR_NOT_SUPPORTED, "comm_tensor_set_memory",
                       devices > 0 ? "does not exist" : no_device_cause(cuda));
  expect_unchanged(t);
  assert_int_equal(comm_tensor_set_memory(t, COMM_MEMORY_HOST, 0), COMM_OK);
  comm_tensor_destroy(t);
}

/* Without a device no stream can be given; NULL (no stream) always can. */
static void streams_need_a_device(void **state) {
  (void)state;
  int devices = 0;
  assert_int_equal(comm_cuda_device_count(&devices, NULL), COMM_OK);
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) fail_msg("comm_init: %s", comm_last_error());
  void *stream = (void *)1;
  assert_int_equal(comm_stream(&stream, world), COMM_OK);
  assert_null(stream);
  assert_int_equal(comm_set_stream(world, NULL), COMM_OK);
  /* Where a device is visible the runtime is handed the pointer, and it
   * cannot tell every pointer that is no stream without crashing: only the
   * refusal without a device is checked here. */
  if (devices == 0) {
    int notAStream = 0;
    expect_named_failure(comm_set_stream(world, &notAStream), COMM_ERR_NOT_SUPPORTED, "comm_set_stream",
                         "no CUDA device is visible");
  }
  assert_int_equal(comm_stream(&stream, world), COMM_OK);
  assert_null(stream);
  assert_int_equal(comm_destroy(world), COMM_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_memory_fails_at_set_memory),
      cmocka_unit_test(streams_need_a_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
