/* comm-shrink-bench: how long a job takes from a rank's death to a working
 * communicator of the survivors, and what a restart of the job costs
 * instead (bench/fault/shrink_bench.sh runs both and takes medians).
 *
 *   shrink FILE  (under commrun --keep-going) the last rank writes the time
 *                (CLOCK_REALTIME, ns) to FILE and kills itself while the
 *                others wait in an all_reduce; each survivor prints
 *                "died_ns D known_ns K ready_ns R": the death, its
 *                all_reduce failing, and its first all_reduce on the
 *                shrunken communicator done (CLOCK_REALTIME).
 *   regrow FILE  (under commrun --replace 1) the same, then the survivors
 *                grow back by commrun's replacement (this program again,
 *                COMM_JOIN=1) and add " grown_ns G": their first all_reduce
 *                on the grown communicator done.
 *   init         rank 0 prints "ready_ns N" (CLOCK_REALTIME) once comm_init
 *                and a first all_reduce are done: with the launch time, what
 *                starting the job again costs. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static comm_status_t all_reduce_one(comm_t *comm) {
  double value = 1;
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, &value, COMM_FLOAT64, 1, &one);
  comm_status_t status = comm_all_reduce(comm, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  return status;
}

int main(int argc, char **argv) {
  const int regrow = argc > 1 && strcmp(argv[1], "regrow") == 0;
  if (argc < 2 || ((strcmp(argv[1], "shrink") == 0 || regrow) && argc < 3)) {
    fprintf(stderr, "usage: comm-shrink-bench shrink FILE | regrow FILE | init\n");
    return 1;
  }
  const char *join = getenv("COMM_JOIN");
  const int replacement = join != NULL && strcmp(join, "1") == 0;
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK || all_reduce_one(world) != COMM_OK) {
    fprintf(stderr, "comm-shrink-bench: %s\n", comm_last_error());
    return 1;
  }
  if (replacement) { /* its comm_init and all_reduce were the survivors' grow and first all_reduce */
    comm_destroy(world);
    return 0;
  }
  int rank = 0, size = 0;
  comm_rank(&rank, world);
  comm_size(&size, world);
  if (strcmp(argv[1], "init") == 0) {
    if (rank == 0) printf("ready_ns %lld\n", (long long)now_ns());
    comm_destroy(world);
    return 0;
  }
  if (rank == size - 1) {
    /* The others are in their all_reduce by then. */
    struct timespec nap = {0, 50000000L};
    nanosleep(&nap, NULL);
    FILE *file = fopen(argv[2], "w");
    if (file == NULL) return 1;
    fprintf(file, "%lld\n", (long long)now_ns());
    fclose(file);
    kill(getpid(), SIGKILL);
  }
  comm_status_t status = all_reduce_one(world);
  const int64_t known = now_ns();
  comm_t *survivors = NULL;
  if (status == COMM_OK || comm_shrink(&survivors, world, NULL) != COMM_OK || all_reduce_one(survivors) != COMM_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, status == COMM_OK ? "the all_reduce did not fail" : comm_last_error());
    return 1;
  }
  const int64_t ready = now_ns();
  comm_t *grown = NULL;
  if (regrow && (comm_grow(&grown, survivors, 1, NULL) != COMM_OK || all_reduce_one(grown) != COMM_OK)) {
    fprintf(stderr, "rank %d: %s\n", rank, comm_last_error());
    return 1;
  }
  const int64_t regrown = now_ns();
  long long died = 0;
  FILE *file = fopen(argv[2], "r");
  if (file == NULL || fscanf(file, "%lld", &died) != 1) return 1;
  fclose(file);
  printf("died_ns %lld known_ns %lld ready_ns %lld", died, (long long)known, (long long)ready);
  if (regrow) printf(" grown_ns %lld", (long long)regrown);
  printf("\n");
  comm_destroy(grown);
  comm_destroy(survivors);
  comm_destroy(world);
  return 0;
}
