/* The world every multi-process test runs on: joined once by main(), read
 * by the test cases. */
#ifndef COMM_TESTS_WORLD_H
#define COMM_TESTS_WORLD_H

#include <stdio.h>

#include "comm.h"

static comm_t *world;
static int rank, size;

/* comm_init from the launcher's environment and this rank's place in it;
 * nonzero, after saying why, when init fails. */
static int join_world(void) {
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  comm_rank(&rank, world);
  comm_size(&size, world);
  return 0;
}

#endif
