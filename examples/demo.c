/* comm-demo: what a first multi-rank program looks like. Run it with
 *   commrun -n 4 comm-demo
 * Every rank all-reduces a vector, the root broadcasts a message, the ranks
 * gather their ranks, and pass a token around a ring. Each step checks its
 * result and says what it got. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    comm_status_t status_ = (call);                                                      \
    if (status_ != COMM_OK) {                                                            \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, comm_last_error(),                  \
              comm_status_string(status_));                                              \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static comm_tensor_t *vector_of(void *data, comm_dtype_t dtype, int64_t n) {
  comm_tensor_t *t = NULL;
  CHECK(comm_tensor_create(&t, data, dtype, 1, &n));
  return t;
}

int main(void) {
  comm_t *world = NULL;
  CHECK(comm_init(&world, NULL));
  int rank, size;
  CHECK(comm_rank(&rank, world));
  CHECK(comm_size(&size, world));
  int failures = 0;

  /* all_reduce: every rank contributes rank + i; the sum is known in advance. */
  enum { N = 4 };
  float values[N];
  for (int i = 0; i < N; ++i) values[i] = (float)(rank + i);
  comm_tensor_t *v = vector_of(values, COMM_FLOAT32, N);
  CHECK(comm_all_reduce(world, v, v, COMM_OP_SUM, NULL));
  for (int i = 0; i < N; ++i) {
    float expected = (float)(size * (size - 1) / 2 + size * i);
    if (values[i] != expected) ++failures;
  }
  printf("all_reduce sum: [%g %g %g %g]\n", values[0], values[1], values[2], values[3]);

  /* broadcast: rank 0's greeting reaches everyone. */
  char greeting[32] = {0};
  if (rank == 0) snprintf(greeting, sizeof greeting, "hello from rank 0 of %d", size);
  comm_tensor_t *g = vector_of(greeting, COMM_UINT8, sizeof greeting);
  CHECK(comm_broadcast(world, g, g, 0, NULL));
  printf("broadcast: \"%s\"\n", greeting);

  /* all_gather: everyone learns every rank. */
  int32_t mine = rank * 10;
  int32_t *all = calloc((size_t)size, sizeof *all);
  comm_tensor_t *m = vector_of(&mine, COMM_INT32, 1);
  comm_tensor_t *a = vector_of(all, COMM_INT32, size);
  CHECK(comm_all_gather(world, m, a, NULL));
  for (int r = 0; r < size; ++r) failures += all[r] != r * 10;
  printf("all_gather: rank %d sees %d values, last %d\n", rank, size, all[size - 1]);

  /* ring: send to the right and receive from the left in one batch. */
  int64_t token = rank, received = -1;
  comm_tensor_t *out = vector_of(&token, COMM_INT64, 1), *in = vector_of(&received, COMM_INT64, 1);
  comm_batch_t *batch = NULL;
  CHECK(comm_batch_create(&batch));
  CHECK(comm_batch_add_send(batch, out, (rank + 1) % size, 7));
  CHECK(comm_batch_add_recv(batch, in, (rank + size - 1) % size, 7));
  CHECK(comm_batch_start(world, batch, NULL));
  failures += received != (rank + size - 1) % size;
  printf("ring: received token %lld from rank %d\n", (long long)received, (rank + size - 1) % size);

  CHECK(comm_barrier(world, NULL));
  printf("%s\n", failures == 0 ? "all results correct" : "WRONG RESULTS");

  comm_batch_destroy(batch);
  comm_tensor_destroy(v);
  comm_tensor_destroy(g);
  comm_tensor_destroy(m);
  comm_tensor_destroy(a);
  comm_tensor_destroy(out);
  comm_tensor_destroy(in);
  free(all);
  CHECK(comm_destroy(world));
  return failures == 0 ? 0 : 1;
}
