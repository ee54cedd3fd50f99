/* comm_setting_count and comm_setting_info describe every setting: a key
 * comm_config_set takes, its default and help, and the value this process's
 * environment gives it (a secret's never). Bad indices and out-parameters
 * fail with the call named, the strings NULL. No world is needed. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static int setting_count(void) {
  int count = 0;
  assert_int_equal(comm_setting_count(&count), COMM_OK);
  assert_true(count > 0);
  return count;
}

/* The index of `key`, or -1. */
static int index_of(const char *key) {
  int count = setting_count();
  for (int i = 0; i < count; ++i) {
    const char *found = NULL;
    assert_int_equal(comm_setting_info(&found, NULL, NULL, NULL, i), COMM_OK);
    if (strcmp(found, key) == 0) return i;
  }
  return -1;
}

static void every_setting_is_a_described_config_key(void **state) {
  (void)state;
  int count = setting_count();
  comm_config_t *config = NULL;
  assert_int_equal(comm_config_create(&config), COMM_OK);
  for (int i = 0; i < count; ++i) {
    const char *key = NULL, *default_value = NULL, *help = NULL;
    assert_int_equal(comm_setting_info(&key, &default_value, &help, NULL, i), COMM_OK);
    assert_non_null(key);
    assert_non_null(default_value);
    assert_non_null(help);
    assert_true(strlen(key) > 0 && strlen(help) > 0);
    if (comm_config_set(config, key, "1") != COMM_OK) fail_msg("setting %d, \"%s\": %s", i, key, comm_last_error());
    for (int j = 0; j < i; ++j) {
      const char *earlier = NULL;
      assert_int_equal(comm_setting_info(&earlier, NULL, NULL, NULL, j), COMM_OK);
      if (strcmp(earlier, key) == 0) fail_msg("\"%s\" is settings %d and %d", key, j, i);
    }
  }
  comm_config_destroy(config);
  /* The documented default of the timeout, as comm.h's config section says. */
  const char *timeout_default = NULL;
  int timeout = index_of("timeout");
  assert_true(timeout >= 0);
  assert_int_equal(comm_setting_info(&(const char *){NULL}, &timeout_default, NULL, NULL, timeout), COMM_OK);
  assert_string_equal(timeout_default, "600");
}

static void the_value_is_the_environments_and_a_secret_is_not_shown(void **state) {
  (void)state;
  int log_file = index_of("log_file"), secret = index_of("job_secret");
  assert_true(log_file >= 0 && secret >= 0);
  const char *key = NULL, *value = "stale";
  unsetenv("COMM_LOG_FILE");
  assert_int_equal(comm_setting_info(&key, NULL, NULL, &value, log_file), COMM_OK);
  assert_null(value);
  setenv("COMM_LOG_FILE", "/tmp/comm.%r.log", 1);
  assert_int_equal(comm_setting_info(&key, NULL, NULL, &value, log_file), COMM_OK);
  assert_string_equal(value, "/tmp/comm.%r.log");
  unsetenv("COMM_LOG_FILE");
  setenv("COMM_JOB_SECRET", "0123456789abcdef0123", 1);
  assert_int_equal(comm_setting_info(&key, NULL, NULL, &value, secret), COMM_OK);
  assert_string_equal(key, "job_secret");
  assert_string_equal(value, "(not shown)");
  unsetenv("COMM_JOB_SECRET");
}

static void bad_indices_fail_with_every_string_null(void **state) {
  (void)state;
  int count = setting_count();
  const int bad[] = {-1, count, count + 100};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    const char *key = "stale", *default_value = "stale", *help = "stale", *value = "stale";
    assert_int_equal(comm_setting_info(&key, &default_value, &help, &value, bad[b]), COMM_ERR_INVALID_ARGUMENT);
    assert_null(key);
    assert_null(default_value);
    assert_null(help);
    assert_null(value);
    assert_non_null(strstr(comm_last_error(), "comm_setting_info"));
    assert_non_null(strstr(comm_last_error(), "index"));
  }
  const char *help = "stale";
  assert_int_equal(comm_setting_info(NULL, NULL, &help, NULL, 0), COMM_ERR_INVALID_ARGUMENT);
  assert_null(help);
  assert_non_null(strstr(comm_last_error(), "out_key"));
  assert_int_equal(comm_setting_count(NULL), COMM_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_setting_is_a_described_config_key),
      cmocka_unit_test(the_value_is_the_environments_and_a_secret_is_not_shown),
      cmocka_unit_test(bad_indices_fail_with_every_string_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
