/* collective_bytes COLLECTIVE [MIB]: one float32 all_reduce, all_gather or
 * reduce_scatter of MIB MiB (default 64: all_reduce's vector, all_gather's
 * output, reduce_scatter's input) over the world, every result element
 * checked. The first rank of each node prints the bytes its host sent on
 * eth0 (the host's link, hosts.sh) during the call: "host_tx_bytes node N
 * bytes B". Barriers fence the count, so only their few bytes are counted
 * besides the collective's; a small all_reduce first makes every connection
 * a lazy transport would make late. Exits 0 when the result is right. */
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

static comm_tensor_t *tensor_of(float *data, size_t count) {
  int64_t shape[1] = {(int64_t)count};
  comm_tensor_t *t = NULL;
  CHECK(comm_tensor_create(&t, data, COMM_FLOAT32, 1, shape));
  return t;
}

/* Element i of rank r's contribution: exact in float32 for any sum here. */
static float contribution(int r, size_t i) { return (float)(r + 1 + (int)(i % 7)); }

/* Runs the collective on `in` (count elements, the MIB's vector) into
 * `out`; returns how many elements of `out` hold the result. */
static size_t run(comm_t *world, const char *collective, float *in, float *out, size_t count, int size) {
  comm_tensor_t *ti = NULL, *to = NULL;
  size_t results = 0;
  if (strcmp(collective, "all_reduce") == 0) {
    ti = tensor_of(in, count), to = tensor_of(out, count), results = count;
    CHECK(comm_all_reduce(world, ti, to, COMM_OP_SUM, NULL));
  } else if (strcmp(collective, "all_gather") == 0) {
    ti = tensor_of(in, count / size), to = tensor_of(out, count), results = count;
    CHECK(comm_all_gather(world, ti, to, NULL));
  } else if (strcmp(collective, "reduce_scatter") == 0) {
    ti = tensor_of(in, count), to = tensor_of(out, count / size), results = count / size;
    CHECK(comm_reduce_scatter(world, ti, to, COMM_OP_SUM, NULL));
  } else {
    fprintf(stderr, "unknown collective %s\n", collective);
    exit(2);
  }
  CHECK(comm_tensor_destroy(ti));
  CHECK(comm_tensor_destroy(to));
  return results;
}

static float expected(const char *collective, size_t i, int rank, int size, size_t count) {
  float all = 0;
  if (strcmp(collective, "all_gather") == 0) return contribution((int)(i / (count / size)), i % (count / size));
  /* reduce_scatter's element i is element rank * block + i of the sum. */
  size_t at = strcmp(collective, "reduce_scatter") == 0 ? rank * (count / size) + i : i;
  for (int r = 0; r < size; ++r) all += contribution(r, at);
  return all;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: collective_bytes all_reduce|all_gather|reduce_scatter [MIB]\n");
    return 2;
  }
  const char *collective = argv[1];
  size_t count = (size_t)(argc > 2 ? atoi(argv[2]) : 64) * 1024 * 1024 / sizeof(float);
  comm_t *world = NULL;
  CHECK(comm_init(&world, NULL));
  int rank, size, local_rank, node;
  CHECK(comm_rank(&rank, world));
  CHECK(comm_size(&size, world));
  CHECK(comm_local_rank(&local_rank, world));
  CHECK(comm_node_id(&node, world));
  count -= count % size;
  float *in = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
  if (in == NULL || out == NULL) return 1;
  float warm[16] = {0};
  run(world, "all_reduce", warm, warm, 16, size);
  for (size_t i = 0; i < count; ++i) in[i] = contribution(rank, i);

  CHECK(comm_barrier(world, NULL));
  long long before = local_rank == 0 ? eth0_tx_bytes() : 0;
  CHECK(comm_barrier(world, NULL));
  size_t results = run(world, collective, in, out, count, size);
  CHECK(comm_barrier(world, NULL));
  if (local_rank == 0) printf("host_tx_bytes node %d bytes %lld\n", node, eth0_tx_bytes() - before);

  for (size_t i = 0; i < results; ++i) {
    float want = expected(collective, i, rank, size, count);
    if (out[i] != want) {
      fprintf(stderr, "rank %d: %s element %zu is %g, not %g\n", rank, collective, i, out[i], want);
      return 1;
    }
  }
  free(in);
  free(out);
  CHECK(comm_destroy(world));
  return 0;
}
