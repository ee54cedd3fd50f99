/* comm_destroy (or comm_abort) from one thread while another thread is
 * inside collectives on the same communicator: the other thread's call must
 * finish or fail with a status, never crash, and every later call on the
 * destroyed communicator is refused. Each rank prints "ok" when it saw that.
 * usage: destroy_during_call destroy|abort */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "join.h"

enum { kCount = 4096 };

struct Loop {
  comm_t *comm;
  int calls;
  comm_status_t last;
  char message[512];
};

static void *all_reduce_loop(void *arg) {
  struct Loop *loop = arg;
  static float data[kCount];
  int64_t count = kCount;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, data, COMM_FLOAT32, 1, &count);
  for (;;) {
    comm_status_t status = comm_all_reduce(loop->comm, t, t, COMM_OP_SUM, NULL);
    if (status != COMM_OK) {
      loop->last = status;
      snprintf(loop->message, sizeof loop->message, "%s", comm_last_error());
      break;
    }
    loop->calls++;
  }
  comm_tensor_destroy(t);
  return NULL;
}

int main(int argc, char **argv) {
  int destroy = argc > 1 && strcmp(argv[1], "destroy") == 0;
  struct Loop loop = {0};
  int rank = 0, size = 0;
  loop.comm = join_world(&rank, &size);
  pthread_t thread;
  pthread_create(&thread, NULL, all_reduce_loop, &loop);
  struct timespec nap = {0, 200 * 1000 * 1000};
  nanosleep(&nap, NULL);
  comm_t *comm = loop.comm;
  comm_status_t status = destroy ? comm_destroy(comm) : comm_abort(comm);
  if (status != COMM_OK) {
    fprintf(stderr, "rank %d: comm_%s: %s\n", rank, argv[1], comm_last_error());
    return 1;
  }
  pthread_join(thread, NULL);
  printf("rank %d: %d calls, then %s: %s\n", rank, loop.calls, comm_status_string(loop.last), loop.message);
  int ok = loop.last != COMM_OK;
  if (destroy) {
    /* The handle is gone: a later call is refused, not run. */
    int size = 0;
    ok = ok && comm_size(&size, comm) == COMM_ERR_INVALID_USAGE;
  } else {
    ok = ok && comm_destroy(comm) == COMM_OK;
  }
  if (ok) printf("rank %d: ok\n", rank);
  return ok ? 0 : 2;
}
