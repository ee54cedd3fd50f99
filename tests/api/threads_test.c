/* Collectives issued on one communicator by several threads at once: a call
 * that finds another thread issuing fails with COMM_ERR_INVALID_USAGE and a
 * message saying why, the other call goes on, and no call gives a wrong
 * result (single rank, so every call that is accepted completes at once).
 * Four threads issue all_reduces until some have been refused. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "comm.h"

enum { kThreads = 4, kCallsPerRound = 2000 };

static comm_t *world;
static atomic_int refused, accepted, wrong, other;
static char refusal[512];
static pthread_barrier_t start;

static void *issue(void *arg) {
  int index = (int)(size_t)arg;
  float data[4];
  int64_t shape[1] = {4};
  comm_tensor_t *t = NULL;
  if (comm_tensor_create(&t, data, COMM_FLOAT32, 1, shape) != COMM_OK) {
    atomic_fetch_add(&other, 1);
    return NULL;
  }
  pthread_barrier_wait(&start);
  for (int i = 0; i < kCallsPerRound; ++i) {
    for (int k = 0; k < 4; ++k) data[k] = (float)(index * 1000 + k);
    comm_status_t status = comm_all_reduce(world, t, t, COMM_OP_SUM, NULL);
    if (status == COMM_OK) {
      atomic_fetch_add(&accepted, 1);
      for (int k = 0; k < 4; ++k) {
        if (data[k] != (float)(index * 1000 + k)) atomic_fetch_add(&wrong, 1);
      }
    } else if (status == COMM_ERR_INVALID_USAGE) {
      if (atomic_fetch_add(&refused, 1) == 0) snprintf(refusal, sizeof refusal, "%s", comm_last_error());
    } else {
      fprintf(stderr, "thread %d: status %d: %s\n", index, status, comm_last_error());
      atomic_fetch_add(&other, 1);
    }
  }
  comm_tensor_destroy(t);
  return NULL;
}

int main(void) {
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "comm_init: %s\n", comm_last_error());
    return 1;
  }
  /* Overlaps are a matter of scheduling: rounds until one was seen (a
   * minute at most), each checked. */
  time_t until = time(NULL) + 60;
  while (atomic_load(&refused) == 0 && time(NULL) < until) {
    pthread_t threads[kThreads];
    pthread_barrier_init(&start, NULL, kThreads);
    for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, issue, (void *)(size_t)i);
    for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
  }
  int failed = 0;
  if (atomic_load(&refused) == 0) {
    fprintf(stderr, "FAILED: no overlapping call was refused\n");
    failed = 1;
  } else if (strstr(refusal, "comm_all_reduce") == NULL || strstr(refusal, "another thread") == NULL) {
    fprintf(stderr, "FAILED: the refusal does not name the call and the cause: %s\n", refusal);
    failed = 1;
  }
  if (atomic_load(&wrong) != 0 || atomic_load(&other) != 0) {
    fprintf(stderr, "FAILED: %d wrong results, %d other failures\n", atomic_load(&wrong), atomic_load(&other));
    failed = 1;
  }
  /* The communicator still works from one thread. */
  float one[1] = {5};
  int64_t shape[1] = {1};
  comm_tensor_t *t = NULL;
  if (comm_tensor_create(&t, one, COMM_FLOAT32, 1, shape) != COMM_OK ||
      comm_all_reduce(world, t, t, COMM_OP_SUM, NULL) != COMM_OK || one[0] != 5) {
    fprintf(stderr, "FAILED: an all_reduce after the threads: %s\n", comm_last_error());
    failed = 1;
  }
  comm_tensor_destroy(t);
  printf("%d calls accepted, %d refused: %s\n", atomic_load(&accepted), atomic_load(&refused), refusal);
  comm_destroy(world);
  return failed;
}
