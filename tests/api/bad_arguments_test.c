/* Every entry point with bad input: a status, a message naming the call and
 * the cause, and no crash. Runs as a single-rank world (no launcher). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static comm_t *world;
static comm_tensor_t *f32x4, *i32x4, *f32x3, *f32x8, *scalar, *f32x4_shifted, *g32x4, *g32x3;
static float fdata[8], gdata[8];
static int32_t idata[4];
static int64_t counts1[1] = {4};
static int64_t negative_counts[1] = {-1};

struct bad_call {
  const char *name;       /* what the case is about */
  const char *call;       /* the comm_ function the message must name */
  comm_status_t expected; /* the status it must return */
  const char *cause;      /* a word the message must contain */
  comm_status_t (*run)(void);
};

/* comm_init with setting `key` at `value`. */
static comm_status_t init_with(const char *key, const char *value) {
  comm_config_t *config = NULL;
  comm_status_t status = comm_config_create(&config);
  if (status != COMM_OK) return status;
  comm_t *made = NULL;
  status = comm_config_set(config, key, value);
  if (status == COMM_OK) status = comm_init(&made, config);
  if (made != NULL) comm_destroy(made);
  comm_config_destroy(config);
  return status;
}

#define CASE(name_, call_, expected_, cause_, body_) \
  static comm_status_t run_##name_(void) { return body_; }
#include "bad_argument_cases.h"
#undef CASE

static const struct bad_call cases[] = {
#define CASE(name_, call_, expected_, cause_, body_) {#name_, call_, expected_, cause_, run_##name_},
#include "bad_argument_cases.h"
#undef CASE
};

static void every_bad_call_fails_cleanly(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const struct bad_call *c = &cases[i];
    comm_status_t status = c->run();
    const char *message = comm_last_error();
    if (status != c->expected || strstr(message, c->call) == NULL || strstr(message, c->cause) == NULL) {
      print_error("case %s: got %d (%s) \"%s\"; expected %d naming %s and '%s'\n", c->name, status,
                  comm_status_string(status), message, c->expected, c->call, c->cause);
      fail();
    }
  }
}

static void destroy_null_is_a_no_op(void **state) {
  (void)state;
  assert_int_equal(comm_destroy(NULL), COMM_OK);
  assert_int_equal(comm_tensor_destroy(NULL), COMM_OK);
  assert_int_equal(comm_handle_destroy(NULL), COMM_OK);
  assert_int_equal(comm_batch_destroy(NULL), COMM_OK);
  assert_int_equal(comm_config_destroy(NULL), COMM_OK);
}

static void double_destroy_is_detected(void **state) {
  (void)state;
  comm_batch_t *batch = NULL;
  assert_int_equal(comm_batch_create(&batch), COMM_OK);
  assert_int_equal(comm_batch_destroy(batch), COMM_OK);
  assert_int_equal(comm_batch_destroy(batch), COMM_ERR_INVALID_USAGE);
  assert_non_null(strstr(comm_last_error(), "comm_batch_destroy"));
  comm_config_t *config = NULL;
  assert_int_equal(comm_config_create(&config), COMM_OK);
  assert_int_equal(comm_config_destroy(config), COMM_OK);
  assert_int_equal(comm_config_destroy(config), COMM_ERR_INVALID_USAGE);
  comm_handle_t *handle = NULL;
  assert_int_equal(comm_barrier(world, &handle), COMM_OK);
  assert_int_equal(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT), COMM_OK);
  assert_int_equal(comm_handle_destroy(handle), COMM_OK);
  assert_int_equal(comm_handle_destroy(handle), COMM_ERR_INVALID_USAGE);
  assert_int_equal(comm_handle_wait(handle, 0), COMM_ERR_INVALID_USAGE);
}

static void use_after_destroy_is_detected(void **state) {
  (void)state;
  comm_t *group = NULL;
  int me = 0;
  assert_int_equal(comm_group_create(&group, world, 1, &me, "solo"), COMM_OK);
  assert_int_equal(comm_destroy(group), COMM_OK);
  int rank = -1;
  assert_int_equal(comm_rank(&rank, group), COMM_ERR_INVALID_USAGE);
  assert_non_null(strstr(comm_last_error(), "destroyed"));
  assert_int_equal(rank, -1);
}

static void status_strings_are_never_null(void **state) {
  (void)state;
  for (int s = -20; s <= 2; ++s) assert_non_null(comm_status_string((comm_status_t)s));
  assert_string_equal(comm_status_string(COMM_ERR_MISMATCH), "mismatch between ranks");
  assert_string_equal(comm_dtype_name((comm_dtype_t)99), "unknown");
  assert_int_equal(comm_dtype_size((comm_dtype_t)99), 0);
  assert_int_equal(comm_dtype_size(COMM_BFLOAT16), 2);
  assert_string_equal(comm_op_name(COMM_OP_BXOR), "bxor");
  assert_int_equal(comm_version(), COMM_VERSION_NUMBER);
  assert_non_null(comm_version_string());
}

static int setup(void **state) {
  (void)state;
  int64_t four = 4, three = 3, eight = 8;
  if (comm_init(&world, NULL) != COMM_OK) return -1;
  comm_tensor_create(&f32x4, fdata, COMM_FLOAT32, 1, &four);
  comm_tensor_create(&i32x4, idata, COMM_INT32, 1, &four);
  comm_tensor_create(&f32x3, fdata, COMM_FLOAT32, 1, &three);
  comm_tensor_create(&f32x8, fdata, COMM_FLOAT32, 1, &eight);
  comm_tensor_create(&scalar, fdata, COMM_FLOAT32, 0, NULL);
  comm_tensor_create(&f32x4_shifted, fdata + 1, COMM_FLOAT32, 1, &four);
  comm_tensor_create(&g32x4, gdata, COMM_FLOAT32, 1, &four);
  comm_tensor_create(&g32x3, gdata, COMM_FLOAT32, 1, &three);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  comm_tensor_destroy(f32x4);
  comm_tensor_destroy(i32x4);
  comm_tensor_destroy(f32x3);
  comm_tensor_destroy(f32x8);
  comm_tensor_destroy(scalar);
  comm_tensor_destroy(f32x4_shifted);
  comm_tensor_destroy(g32x4);
  comm_tensor_destroy(g32x3);
  return comm_destroy(world) == COMM_OK ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_bad_call_fails_cleanly),  cmocka_unit_test(destroy_null_is_a_no_op),
      cmocka_unit_test(double_destroy_is_detected),    cmocka_unit_test(use_after_destroy_is_detected),
      cmocka_unit_test(status_strings_are_never_null),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
