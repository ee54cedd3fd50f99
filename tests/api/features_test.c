/* comm_has_feature answers for every comm_feature_t, as the build was
 * configured (COMM_TEST_BUILT_WITH_CUDA), and refuses others;
 * comm_providers lists comm's own tcp first, and every provider it lists
 * really opens: a single-rank world over it (with the direct shared-memory
 * path off, so the provider carries the traffic) all-reduces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

static void features_are_answered(void **state) {
  (void)state;
  int has = -1;
  assert_int_equal(comm_has_feature(&has, COMM_FEATURE_CUDA), COMM_OK);
  assert_true(has == 0 || has == 1);
  /* What CMake was asked to build (tests/api/CMakeLists.txt passes it on). */
  const char *built = getenv("COMM_TEST_BUILT_WITH_CUDA");
  if (built != NULL) assert_int_equal(has, strcmp(built, "1") == 0);
  assert_int_equal(comm_has_feature(NULL, COMM_FEATURE_CUDA), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_has_feature(&has, (comm_feature_t)99), COMM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(comm_last_error(), "comm_has_feature"));
}

/* A single-rank world with `provider` carrying its traffic all-reduces. */
static void check_provider(const char *provider) {
  comm_config_t *config = NULL;
  assert_int_equal(comm_config_create(&config), COMM_OK);
  assert_int_equal(comm_config_set(config, "provider", provider), COMM_OK);
  assert_int_equal(comm_config_set(config, "shm", "0"), COMM_OK);
  comm_t *world = NULL;
  comm_status_t status = comm_init(&world, config);
  comm_config_destroy(config);
  if (status != COMM_OK) fail_msg("comm_providers lists \"%s\", but: %s", provider, comm_last_error());
  float x = 2;
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  assert_int_equal(comm_tensor_create(&t, &x, COMM_FLOAT32, 1, &one), COMM_OK);
  assert_int_equal(comm_all_reduce(world, t, t, COMM_OP_SUM, NULL), COMM_OK);
  assert_true(x == 2);
  comm_tensor_destroy(t);
  assert_int_equal(comm_destroy(world), COMM_OK);
}

static void every_listed_provider_works(void **state) {
  (void)state;
  const char *list = NULL;
  assert_int_equal(comm_providers(&list), COMM_OK);
  assert_non_null(list);
  print_message("providers: %s\n", list);
  assert_true(strncmp(list, "tcp", 3) == 0 && (list[3] == ',' || list[3] == '\0'));
  char name[128];
  for (const char *at = list; *at != '\0';) {
    size_t length = strcspn(at, ",");
    assert_true(length > 0 && length < sizeof name);
    memcpy(name, at, length);
    name[length] = '\0';
    check_provider(name);
    at += length + (at[length] == ',');
  }
  const char *again = NULL;
  assert_int_equal(comm_providers(&again), COMM_OK);
  assert_ptr_equal(again, list);
  assert_int_equal(comm_providers(NULL), COMM_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(features_are_answered),
      cmocka_unit_test(every_listed_provider_works),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
