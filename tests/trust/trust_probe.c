/* A rank program for the trust tests, through the public API only.
 *   all-reduce   comm_init, an all_reduce of rank + 1 over the world;
 *                prints "rank R of N: sum S" (S = N(N+1)/2) or the error of
 *                the call that failed, with its status.
 *   all-reduce-after FILE   the same, once FILE exists (waits up to 300 s).
 *   segfault R   the rank COMM_RANK says is R dies of SIGSEGV; the others
 *                exit 0 at once.
 *   splits N     keeps one split of the world, makes and destroys N more
 *                (checking none has the kept one's id, or the world's, in
 *                its name), then all_reduces rank + 1 over a last one;
 *                prints "rank R: N splits: sum S".
 *   init-again [FILE]  comm_init twice while the world lives (the second
 *                must fail at once), then after comm_destroy of the world
 *                (it must work; with FILE, once FILE exists): prints what
 *                each gave and the sums. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

static int report(const char *call, comm_status_t status) {
  printf("%s: %s: %s\n", call, comm_status_string(status), comm_last_error());
  fflush(stdout);
  return 1;
}

static int all_reduce(void) {
  comm_t *world = NULL;
  comm_status_t status = comm_init(&world, NULL);
  if (status != COMM_OK) return report("comm_init", status);
  int rank = 0, size = 0;
  comm_rank(&rank, world);
  comm_size(&size, world);
  int64_t value = rank + 1;
  int64_t one = 1;
  comm_tensor_t *tensor = NULL;
  comm_tensor_create(&tensor, &value, COMM_INT64, 1, &one);
  status = comm_all_reduce(world, tensor, tensor, COMM_OP_SUM, NULL);
  if (status != COMM_OK) return report("comm_all_reduce", status);
  printf("rank %d of %d: sum %lld\n", rank, size, (long long)value);
  fflush(stdout);
  comm_tensor_destroy(tensor);
  comm_destroy(world);
  return 0;
}

static int await_file(const char *path) {
  struct timespec nap = {0, 20 * 1000 * 1000};
  for (int i = 0; i < 300 * 50; ++i) {
    if (access(path, F_OK) == 0) return 0;
    nanosleep(&nap, NULL);
  }
  printf("%s never appeared\n", path);
  return 1;
}

static int sum_over(comm_t *comm, int rank) {
  int64_t value = rank + 1;
  int64_t one = 1;
  comm_tensor_t *tensor = NULL;
  comm_tensor_create(&tensor, &value, COMM_INT64, 1, &one);
  comm_status_t status = comm_all_reduce(comm, tensor, tensor, COMM_OP_SUM, NULL);
  comm_tensor_destroy(tensor);
  return status == COMM_OK ? (int)value : -1;
}

static int splits(int count) {
  comm_t *world = NULL;
  comm_status_t status = comm_init(&world, NULL);
  if (status != COMM_OK) return report("comm_init", status);
  int rank = 0;
  comm_rank(&rank, world);
  comm_t *kept = NULL;
  if ((status = comm_split(&kept, world, 0, rank, NULL)) != COMM_OK) return report("comm_split", status);
  const char *kept_name = NULL;
  comm_name(&kept_name, kept);
  for (int i = 0; i < count; ++i) {
    comm_t *child = NULL;
    if ((status = comm_split(&child, world, 0, rank, NULL)) != COMM_OK) {
      printf("split %d: ", i);
      return report("comm_split", status);
    }
    const char *name = NULL;
    comm_name(&name, child);
    if (strcmp(name, kept_name) == 0 || strcmp(name, "group-0") == 0) {
      printf("split %d is named %s, the id of a live communicator\n", i, name);
      return 1;
    }
    comm_destroy(child);
  }
  comm_t *last = NULL;
  if ((status = comm_split(&last, world, 0, rank, NULL)) != COMM_OK) return report("comm_split", status);
  printf("rank %d: %d splits: sum %d\n", rank, count, sum_over(last, rank));
  fflush(stdout);
  comm_destroy(last);
  comm_destroy(kept);
  comm_destroy(world);
  return 0;
}

static int init_again(const char *go) {
  comm_t *world = NULL;
  comm_status_t status = comm_init(&world, NULL);
  if (status != COMM_OK) return report("comm_init", status);
  int rank = 0;
  comm_rank(&rank, world);
  printf("rank %d: first world: sum %d\n", rank, sum_over(world, rank));
  comm_t *second = NULL;
  status = comm_init(&second, NULL);
  printf("rank %d: comm_init while it lives: %s: %s\n", rank, comm_status_string(status),
         status == COMM_OK ? "" : comm_last_error());
  comm_destroy(second);
  comm_destroy(world);
  world = NULL;
  printf("rank %d: destroyed\n", rank);
  fflush(stdout);
  if (go != NULL && await_file(go) != 0) return 1;
  if ((status = comm_init(&world, NULL)) != COMM_OK) return report("comm_init after comm_destroy", status);
  printf("rank %d: second world: sum %d\n", rank, sum_over(world, rank));
  fflush(stdout);
  comm_destroy(world);
  return 0;
}

static int segfault(int victim) {
  const char *rank = getenv("COMM_RANK");
  /* The library is loaded (and its dependencies' constructors have run)
   * before main: a call into it is not needed for what is tested. */
  printf("comm %u\n", comm_version());
  fflush(stdout);
  if (rank == NULL || atoi(rank) != victim) return 0;
  volatile int *nowhere = NULL;
  *nowhere = 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "all-reduce") == 0) return all_reduce();
  if (strcmp(mode, "segfault") == 0 && argc > 2) return segfault(atoi(argv[2]));
  if (strcmp(mode, "splits") == 0 && argc > 2) return splits(atoi(argv[2]));
  if (strcmp(mode, "init-again") == 0) return init_again(argc > 2 ? argv[2] : NULL);
  if (strcmp(mode, "all-reduce-after") == 0 && argc > 2) return await_file(argv[2]) != 0 ? 1 : all_reduce();
  fprintf(stderr,
          "usage: trust_probe all-reduce | all-reduce-after FILE | segfault R | splits N | init-again [FILE]\n");
  return 2;
}
