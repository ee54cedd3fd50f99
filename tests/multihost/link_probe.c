/* link_probe SECONDS: all_reduces of a few KiB, one after another, for
 * SECONDS, each result checked against the sum the probe computes itself.
 * Rank 0 says when the time is up, so every rank makes the same calls.
 * Prints "rank R: N all_reduces, all right" and exits 0, or, at the first
 * failure, "rank R: STATUS after S s: MESSAGE" (S: how long that call took)
 * and exits 3 (after a shrink, with LINK_PROBE_SHRINK set: see shrink()).
 * link_failure.sh takes a host's link away underneath it.
 * Between calls each rank naps for a millisecond: the link must find calls
 * in flight, not the cores saturated for the whole run. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comm.h"

enum { kCount = 1024 };

/* Once it has one right result, the rank says so with an empty file
 * LINK_PROBE_READY/rank.R (when set): the link goes only once every rank
 * is past comm_init. */
static void mark_ready(int rank) {
  const char *dir = getenv("LINK_PROBE_READY");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
  FILE *f = fopen(path, "w");
  if (f != NULL) fclose(f);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* With LINK_PROBE_SHRINK set, a rank whose all_reduce failed shrinks the
 * world and says how that went: "rank R: shrink STATUS after S s: ...". */
static void shrink(comm_t *world, int rank) {
  const double start = now();
  comm_t *survivors = NULL;
  const comm_status_t status = comm_shrink(&survivors, world, NULL);
  int size = 0;
  if (status == COMM_OK) comm_size(&size, survivors);
  printf("rank %d: shrink %s after %.1f s: %s\n", rank, comm_status_string(status), now() - start,
         status == COMM_OK ? "a communicator of the survivors" : comm_last_error());
  fflush(stdout);
  comm_destroy(survivors);
}

int main(int argc, char **argv) {
  if (argc != 2 || atof(argv[1]) <= 0) {
    fprintf(stderr, "usage: link_probe SECONDS\n");
    return 2;
  }
  const double seconds = atof(argv[1]);
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  int rank = 0, size = 0;
  comm_rank(&rank, world);
  comm_size(&size, world);
  static int64_t values[kCount];
  const int64_t count = kCount;
  comm_tensor_t *tensor = NULL;
  if (comm_tensor_create(&tensor, values, COMM_INT64, 1, &count) != COMM_OK) {
    fprintf(stderr, "comm_tensor_create: %s\n", comm_last_error());
    return 1;
  }
  const double end = now() + seconds;
  long done = 0;
  int failed = 0;
  /* Element 0 carries rank 0's word on whether this is the last call, so
   * that every rank makes the same number of calls. */
  for (int last = 0; !last && !failed; ++done) {
    values[0] = rank == 0 && now() >= end;
    for (int64_t i = 1; i < kCount; ++i) values[i] = rank * 1000 + i + done;
    const double start = now();
    const comm_status_t status = comm_all_reduce(world, tensor, tensor, COMM_OP_SUM, NULL);
    if (status != COMM_OK) {
      printf("rank %d: %s after %.1f s: %s\n", rank, comm_status_string(status), now() - start, comm_last_error());
      failed = 1;
      if (getenv("LINK_PROBE_SHRINK") != NULL) shrink(world, rank);
      break;
    }
    last = values[0] != 0;
    if (done == 0) mark_ready(rank);
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    for (int64_t i = 1; i < kCount; ++i) {
      const int64_t want = 1000LL * size * (size - 1) / 2 + (int64_t)size * (i + done);
      if (values[i] != want) {
        printf("rank %d: all_reduce %ld: element %ld is %ld, expected %ld\n", rank, done, (long)i, (long)values[i],
               (long)want);
        failed = 1;
        break;
      }
    }
  }
  if (!failed) printf("rank %d: %ld all_reduces, all right\n", rank, done);
  fflush(stdout);
  comm_tensor_destroy(tensor);
  /* After a failure the world is only torn down locally; the peers know. */
  comm_destroy(world);
  return failed ? 3 : 0;
}
