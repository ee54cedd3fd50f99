/* The version handshake: comm_check_version accepts the header's own
 * version and older minors of its major, and refuses newer minors and other
 * majors with a message naming both versions; the macros and the library
 * report CMake's project(VERSION), given here as COMM_PROJECT_VERSION. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static void expect_refused(comm_status_t status) {
  assert_int_equal(status, COMM_ERR_NOT_SUPPORTED);
  const char *message = comm_last_error();
  if (strstr(message, "comm_check_version") == NULL || strstr(message, comm_version_string()) == NULL) {
    fail_msg("expected a message naming comm_check_version and %s, got \"%s\"", comm_version_string(), message);
  }
}

static void own_version_and_older_minors_pass(void **state) {
  (void)state;
  assert_int_equal(COMM_CHECK_VERSION(), COMM_OK);
  assert_int_equal(comm_check_version(COMM_VERSION_MAJOR, COMM_VERSION_MINOR), COMM_OK);
  for (int minor = 0; minor < COMM_VERSION_MINOR; ++minor) {
    assert_int_equal(comm_check_version(COMM_VERSION_MAJOR, minor), COMM_OK);
  }
}

static void newer_minor_and_other_major_are_refused(void **state) {
  (void)state;
  expect_refused(comm_check_version(COMM_VERSION_MAJOR, COMM_VERSION_MINOR + 1));
  expect_refused(comm_check_version(COMM_VERSION_MAJOR + 1, 0));
  if (COMM_VERSION_MAJOR > 0) expect_refused(comm_check_version(COMM_VERSION_MAJOR - 1, COMM_VERSION_MINOR));
  assert_int_equal(comm_check_version(-1, 0), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_check_version(COMM_VERSION_MAJOR, -1), COMM_ERR_INVALID_ARGUMENT);
}

static void versions_come_from_the_project(void **state) {
  (void)state;
  assert_string_equal(comm_version_string(), COMM_PROJECT_VERSION);
  assert_int_equal(comm_version(), COMM_VERSION_NUMBER);
  assert_int_equal(COMM_VERSION_NUMBER, COMM_VERSION_MAJOR * 10000 + COMM_VERSION_MINOR * 100 + COMM_VERSION_PATCH);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(own_version_and_older_minors_pass),
      cmocka_unit_test(newer_minor_and_other_major_are_refused),
      cmocka_unit_test(versions_come_from_the_project),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
