/* The world communicator of a liveness test program, joined from commrun's
 * environment, with this rank's place in it; exits, after saying why, when
 * comm_init fails. */
#ifndef COMM_TESTS_LIVENESS_JOIN_H
#define COMM_TESTS_LIVENESS_JOIN_H

#include <stdio.h>
#include <stdlib.h>

#include "comm.h"

static comm_t *join_world(int *rank, int *size) {
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    exit(1);
  }
  comm_rank(rank, world);
  comm_size(size, world);
  return world;
}

#endif
