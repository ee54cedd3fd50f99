/* Objects over their whole life (single rank): communicator ids come back
 * when communicators are destroyed, so a long job can make any number of
 * them. */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(splits_beyond_the_id_space),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
