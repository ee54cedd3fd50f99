/* all_reduce_bytes [MIB]: one float32 all_reduce of MIB MiB (default 64) over
 * the world, every result element checked. The first rank of each node
 * prints the bytes its host sent on eth0 (the host's link, hosts.sh) during
 * the call: "host_tx_bytes node N bytes B". Barriers fence the count, so
 * only their few bytes are counted besides the all_reduce's; a small
 * all_reduce first makes every connection a lazy transport would make late.
 * Exits 0 when the result is right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define CHECK(call)                                                 \
  do {                                                              \
    if ((call) != COMM_OK) {                                        \
      fprintf(stderr, "%s failed: %s\n", #call, comm_last_error()); \
      exit(1);                                                      \
    }                                                               \
  } while (0)

/* Bytes this network namespace sent on eth0 (/proc/net/dev follows the
 * reader's namespace, where /sys/class/net follows sysfs's mount). */
static long long eth0_tx_bytes(void) {
  FILE *f = fopen("/proc/net/dev", "r");
  if (f == NULL) return -1;
  char line[512];
  long long tx = -1;
  while (fgets(line, sizeof(line), f) != NULL) {
    char *colon = strchr(line, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    char *name = line + strspn(line, " ");
    if (strcmp(name, "eth0") != 0) continue;
    long long v[9];
    if (sscanf(colon + 1, "%lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7], &v[8]) == 9)
      tx = v[8];
  }
  fclose(f);
  return tx;
}

static void all_reduce(comm_t *world, float *data, size_t count) {
  int64_t shape[1] = {(int64_t)count};
  comm_tensor_t *t = NULL;
  CHECK(comm_tensor_create(&t, data, COMM_FLOAT32, 1, shape));
  CHECK(comm_all_reduce(world, t, t, COMM_OP_SUM, NULL));
  CHECK(comm_tensor_destroy(t));
}

int main(int argc, char **argv) {
  size_t count = (size_t)(argc > 1 ? atoi(argv[1]) : 64) * 1024 * 1024 / sizeof(float);
  comm_t *world = NULL;
  CHECK(comm_init(&world, NULL));
  int rank, size, local_rank, node;
  CHECK(comm_rank(&rank, world));
  CHECK(comm_size(&size, world));
  CHECK(comm_local_rank(&local_rank, world));
  CHECK(comm_node_id(&node, world));
  float *data = malloc(count * sizeof(float));
  if (data == NULL) return 1;
  all_reduce(world, data, 16);
  for (size_t i = 0; i < count; ++i) data[i] = (float)(rank + 1 + (int)(i % 7));

  CHECK(comm_barrier(world, NULL));
  long long before = local_rank == 0 ? eth0_tx_bytes() : 0;
  CHECK(comm_barrier(world, NULL));
  all_reduce(world, data, count);
  CHECK(comm_barrier(world, NULL));
  if (local_rank == 0) printf("host_tx_bytes node %d bytes %lld\n", node, eth0_tx_bytes() - before);

  for (size_t i = 0; i < count; ++i) {
    float want = (float)(size * (size + 1) / 2 + size * (int)(i % 7));
    if (data[i] != want) {
      fprintf(stderr, "rank %d: element %zu is %g, not %g\n", rank, i, data[i], want);
      return 1;
    }
  }
  free(data);
  CHECK(comm_destroy(world));
  return 0;
}
