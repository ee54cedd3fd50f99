/* Objects over their whole life (single rank): communicator ids come back
 * when communicators are destroyed, so a long job can make any number of
 * them; a destroyed tensor is refused, not read; comm_init after the
 * world's comm_destroy works. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

#define OK(call) assert_int_equal((call), COMM_OK)

/* More than the 65535 ids there are besides the world's: ids come back when
 * their communicators go, and never one a live communicator holds (the
 * default name carries the id). */
static void splits_beyond_the_id_space(void **state) {
  (void)state;
  comm_t *world = NULL;
  OK(comm_init(&world, NULL));
  comm_t *kept = NULL;
  OK(comm_split(&kept, world, 0, 0, NULL));
  const char *kept_name = NULL;
  OK(comm_name(&kept_name, kept));
  for (int i = 0; i < 70000; ++i) {
    comm_t *child = NULL;
    if (comm_split(&child, world, 0, 0, NULL) != COMM_OK) fail_msg("split %d: %s", i, comm_last_error());
    const char *name = NULL;
    OK(comm_name(&name, child));
    if (strcmp(name, kept_name) == 0 || strcmp(name, "group-0") == 0) {
      fail_msg("split %d is named %s, the id of a live communicator", i, name);
    }
    OK(comm_destroy(child));
  }
  OK(comm_destroy(kept));
  OK(comm_destroy(world));
}

/* A destroyed tensor is refused by every call, destroying it again too,
 * also once a new tensor was made meanwhile (which must not be mistaken for
 * it); nothing reads the memory it had. */
static void a_destroyed_tensor_is_refused(void **state) {
  (void)state;
  float data[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  comm_tensor_t *gone = NULL, *fresh = NULL;
  OK(comm_tensor_create(&gone, data, COMM_FLOAT32, 1, shape));
  OK(comm_tensor_destroy(gone));
  OK(comm_tensor_create(&fresh, data, COMM_FLOAT32, 1, shape));
  assert_int_equal(comm_tensor_destroy(gone), COMM_ERR_INVALID_USAGE);
  assert_non_null(strstr(comm_last_error(), "comm_tensor_destroy"));
  assert_non_null(strstr(comm_last_error(), "destroyed"));
  int64_t numel = 0;
  assert_int_equal(comm_tensor_numel(&numel, gone), COMM_ERR_INVALID_USAGE);
  OK(comm_tensor_numel(&numel, fresh));
  assert_int_equal(numel, 4);

  comm_t *world = NULL;
  OK(comm_init(&world, NULL));
  assert_int_equal(comm_all_reduce(world, gone, fresh, COMM_OP_SUM, NULL), COMM_ERR_INVALID_USAGE);
  assert_non_null(strstr(comm_last_error(), "in"));
  OK(comm_all_reduce(world, fresh, fresh, COMM_OP_SUM, NULL));
  OK(comm_destroy(world));
  OK(comm_tensor_destroy(fresh));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(splits_beyond_the_id_space),
      cmocka_unit_test(a_destroyed_tensor_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
