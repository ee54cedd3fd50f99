/* Communicators made from the world, through commrun at any rank count, over
 * shm or tcp: comm_group_create (a group without world rank 0, two disjoint
 * groups working at once, rank translation both ways), comm_split (order by
 * key, ties by parent rank, COMM_UNDEFINED), comm_split_by_node and the node
 * queries (nodes faked with COMM_TEST_RANKS_PER_NODE), collectives on those groups
 * checked by value, names, destroying a split while peers still finish its
 * last collective; and mismatch detection: ranks that disagree on the
 * collective, dtype, count, op or root (also where their signatures put
 * them in different lanes of the node board) get COMM_ERR_MISMATCH (at least one of
 * them, with a message naming both sides), nobody waits for the timeout, and
 * the communicator goes on working. The mismatch cases run when the program
 * is given the argument "mismatch" (their own CTest entries), the rest
 * without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "comm.h"
#include "data_patterns.h"
#include "world.h"

/* Half the library's deadline for one wait (COMM_TIMEOUT, 600 s unless the
 * environment sets it): a rank that took longer over a mismatch was waiting
 * for the deadline rather than being told. */
static double half_the_timeout(void) {
  const char *setting = getenv("COMM_TIMEOUT");
  double timeout = setting != NULL && *setting != '\0' ? atof(setting) : 600;
  return timeout / 2;
}

/* all_gather of one int per rank of `comm` into `out` (its size entries). */
static void gather_ints(comm_t *comm, int value, int *out) {
  int n;
  OK(comm_size(&n, comm));
  comm_tensor_t *ti = tensor(&value, COMM_INT32, 1, 1), *to = tensor(out, COMM_INT32, n, 1);
  OK(comm_all_gather(comm, ti, to, NULL));
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
}

/* Check that `comm` holds the world ranks `members` in that order, that
 * translation works both ways, and that collectives on it move the right data. */
static void check_group(comm_t *comm, const int *members, int n, int salt) {
  int grank, gsize;
  OK(comm_rank(&grank, comm));
  OK(comm_size(&gsize, comm));
  assert_int_equal(gsize, n);
  assert_int_equal(members[grank], rank);
  for (int g = 0; g < n; ++g) {
    int w, back;
    OK(comm_rank_to_world(&w, comm, g));
    assert_int_equal(w, members[g]);
    OK(comm_rank_from_world(&back, comm, w));
    assert_int_equal(back, g);
  }
  for (int w = 0; w < size; ++w) {
    int in_group = 0;
    for (int g = 0; g < n; ++g) in_group |= members[g] == w;
    int g;
    OK(comm_rank_from_world(&g, comm, w));
    if (!in_group) assert_int_equal(g, -1);
  }
  int bad;
  assert_int_equal(comm_rank_to_world(&bad, comm, n), COMM_ERR_INVALID_ARGUMENT);

  /* all_gather: every member's world rank, in group order. */
  int seen[64];
  assert_true(n <= 64);
  gather_ints(comm, rank * 100 + salt, seen);
  for (int g = 0; g < n; ++g) assert_int_equal(seen[g], members[g] * 100 + salt);

  /* broadcast from the last group rank, whose data names it and the salt. */
  enum { kBytes = 5000 };
  uint8_t *data = guarded(kBytes);
  int root = n - 1;
  if (grank == root) fill(data, kBytes, members[root], salt);
  comm_tensor_t *t = tensor(data, COMM_UINT8, kBytes, 1);
  OK(comm_broadcast(comm, t, t, root, NULL));
  expect_pattern(data, kBytes, members[root], salt, "broadcast on a group");
  expect_guard(data, kBytes, "broadcast on a group");
  comm_tensor_destroy(t);
  free(data);

  /* gather_v with uneven row counts (group rank g sends g % 3 rows) to group rank 0. */
  int64_t counts[64];
  size_t offsets[64], total = 0;
  enum { kRow = 4 };
  for (int g = 0; g < n; ++g) {
    counts[g] = g % 3;
    offsets[g] = total;
    total += (size_t)counts[g] * kRow;
  }
  uint8_t *mine = guarded((size_t)counts[grank] * kRow), *all = guarded(total);
  fill(mine, (size_t)counts[grank] * kRow, rank, salt + 1);
  comm_tensor_t *ti = tensor(mine, COMM_UINT8, counts[grank], kRow);
  comm_tensor_t *to = grank == 0 ? tensor(all, COMM_UINT8, (int64_t)(total / kRow), kRow) : NULL;
  OK(comm_gather_v(comm, ti, to, counts, 0, NULL));
  if (grank == 0) {
    for (int g = 0; g < n; ++g) {
      expect_pattern(all + offsets[g], (size_t)counts[g] * kRow, members[g], salt + 1, "gather_v on a group");
    }
  }
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(mine);
  free(all);
  OK(comm_barrier(comm, NULL));
}

/* --------------------------------------------------------------- groups */

static void group_without_world_rank_0(void **state) {
  (void)state;
  if (size < 2) skip();
  /* World ranks size-1 .. 1: group rank g is world rank size-1-g. */
  int members[64];
  for (int g = 0; g < size - 1; ++g) members[g] = size - 1 - g;
  if (rank != 0) {
    comm_t *group = NULL;
    OK(comm_group_create(&group, world, size - 1, members, "without-0"));
    const char *name = NULL;
    OK(comm_name(&name, group));
    assert_string_equal(name, "without-0");
    check_group(group, members, size - 1, 1);
    OK(comm_destroy(group));
  } else {
    comm_t *group = NULL;
    assert_int_equal(comm_group_create(&group, world, size - 1, members, NULL), COMM_ERR_INVALID_USAGE);
    assert_null(group);
  }
  OK(comm_barrier(world, NULL));
}

static void two_disjoint_groups_at_once(void **state) {
  (void)state;
  /* Even and odd world ranks, each group busy with its own data at the same time. */
  int members[64], n = 0;
  for (int w = rank % 2; w < size; w += 2) members[n++] = w;
  comm_t *group = NULL;
  OK(comm_group_create(&group, world, n, members, rank % 2 ? "odds" : "evens"));
  const char *name = NULL;
  OK(comm_name(&name, group));
  assert_string_equal(name, rank % 2 ? "odds" : "evens");
  check_group(group, members, n, 10 + rank % 2);

  /* Asynchronous all_to_all on both groups at once, data naming the group. */
  int grank;
  OK(comm_rank(&grank, group));
  int32_t in[64], out[64];
  for (int g = 0; g < n; ++g) in[g] = (rank % 2) * 100000 + grank * 100 + g;
  comm_tensor_t *ti = tensor(in, COMM_INT32, n, 1), *to = tensor(out, COMM_INT32, n, 1);
  comm_handle_t *h = NULL;
  OK(comm_all_to_all_single(group, ti, to, NULL, NULL, &h));
  OK(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(h));
  for (int g = 0; g < n; ++g) assert_int_equal(out[g], (rank % 2) * 100000 + g * 100 + grank);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  OK(comm_destroy(group));
  OK(comm_barrier(world, NULL));
}

static void generated_and_world_names(void **state) {
  (void)state;
  const char *name = NULL;
  OK(comm_name(&name, world));
  assert_string_equal(name, "world");
  int everyone[64];
  for (int w = 0; w < size; ++w) everyone[w] = w;
  comm_t *a = NULL, *b = NULL;
  OK(comm_group_create(&a, world, size, everyone, NULL));
  OK(comm_group_create(&b, world, size, everyone, NULL));
  const char *na = NULL, *nb = NULL;
  OK(comm_name(&na, a));
  OK(comm_name(&nb, b));
  assert_true(strlen(na) > 0);
  assert_string_not_equal(na, "world");
  assert_string_not_equal(na, nb);
  /* Two groups of the same members are still two communicators: traffic stays apart. */
  int seen_a[64], seen_b[64];
  comm_handle_t *h = NULL;
  int va = rank + 1000, vb = rank + 2000;
  comm_tensor_t *ta = tensor(&va, COMM_INT32, 1, 1), *tsa = tensor(seen_a, COMM_INT32, size, 1);
  OK(comm_all_gather(a, ta, tsa, &h));
  gather_ints(b, vb, seen_b);
  OK(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(h));
  for (int w = 0; w < size; ++w) {
    assert_int_equal(seen_a[w], w + 1000);
    assert_int_equal(seen_b[w], w + 2000);
  }
  comm_tensor_destroy(ta);
  comm_tensor_destroy(tsa);
  OK(comm_destroy(b));
  OK(comm_destroy(a));
}

/* ---------------------------------------------------------------- split */

static void split_orders_by_key_then_parent_rank(void **state) {
  (void)state;
  /* Colour = parity; key = -rank, so each half comes out in reverse order. */
  comm_t *half = NULL;
  OK(comm_split(&half, world, rank % 2, -rank, rank % 2 ? "split-odd" : "split-even"));
  assert_non_null(half);
  int members[64], n = 0;
  for (int w = size - 1; w >= 0; --w) {
    if (w % 2 == rank % 2) members[n++] = w;
  }
  const char *name = NULL;
  OK(comm_name(&name, half));
  assert_string_equal(name, rank % 2 ? "split-odd" : "split-even");
  check_group(half, members, n, 20 + rank % 2);
  OK(comm_destroy(half));

  /* Equal keys keep the parent's order; world rank 0, alone with key 1, goes last. */
  comm_t *all = NULL;
  OK(comm_split(&all, world, 7, rank == 0 ? 1 : 0, NULL));
  n = 0;
  for (int w = 1; w < size; ++w) members[n++] = w;
  members[n++] = 0;
  check_group(all, members, n, 30);
  OK(comm_destroy(all));
}

static void split_with_undefined_colour(void **state) {
  (void)state;
  /* World rank 1 joins nothing; the rest split by rank / 3. */
  int color = rank == 1 ? COMM_UNDEFINED : rank / 3;
  comm_t *part = NULL;
  OK(comm_split(&part, world, color, 0, NULL));
  if (color == COMM_UNDEFINED) {
    assert_null(part);
  } else {
    assert_non_null(part);
    int members[64], n = 0;
    for (int w = 0; w < size; ++w) {
      if (w != 1 && w / 3 == color) members[n++] = w;
    }
    check_group(part, members, n, 40 + color);
    OK(comm_destroy(part));
  }
  /* A negative colour other than COMM_UNDEFINED is refused before anything is published. */
  comm_t *never = NULL;
  assert_int_equal(comm_split(&never, world, -5, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_null(never);
  OK(comm_barrier(world, NULL));
}

/* comm_destroy is not collective: a rank that has finished its part of an
 * all_gather and destroys the communicator must never fail a peer still
 * finishing the same all_gather (once seen at 8 ranks over shm: "rank N has
 * exited" or a timeout). Round after round, two splits each run large
 * all_gathers, checked, and are destroyed as soon as this rank is done. */
static void destroy_while_peers_finish(void **state) {
  (void)state;
  enum { kRounds = 40, kGathers = 2, kCount = 50000 };
  int64_t *in = malloc(kCount * sizeof *in), *out = malloc((size_t)kCount * size * sizeof *out);
  assert_non_null(in);
  assert_non_null(out);
  for (int round = 0; round < kRounds; ++round) {
    comm_t *splits[2] = {NULL, NULL};
    OK(comm_split(&splits[0], world, rank % 2, rank, NULL));
    OK(comm_split(&splits[1], world, rank < size / 2, rank, NULL));
    for (int s = 0; s < 2; ++s) {
      int n, me;
      OK(comm_size(&n, splits[s]));
      OK(comm_rank(&me, splits[s]));
      int64_t in_shape[1] = {kCount}, out_shape[1] = {(int64_t)kCount * n};
      comm_tensor_t *ti = NULL, *to = NULL;
      OK(comm_tensor_create(&ti, in, COMM_INT64, 1, in_shape));
      OK(comm_tensor_create(&to, out, COMM_INT64, 1, out_shape));
      for (int g = 0; g < kGathers; ++g) {
        const int64_t stamp = ((int64_t)round * kGathers + g) * 64;
        for (int i = 0; i < kCount; ++i) in[i] = stamp + me + i;
        OK(comm_all_gather(splits[s], ti, to, NULL));
        for (int q = 0; q < n; ++q) {
          for (int i = 0; i < kCount; i += 997) assert_int_equal(out[(size_t)q * kCount + i], stamp + q + i);
        }
      }
      comm_tensor_destroy(ti);
      comm_tensor_destroy(to);
    }
    OK(comm_destroy(splits[0]));
    OK(comm_destroy(splits[1]));
  }
  free(in);
  free(out);
}

/* The world on one host is one node, unless COMM_TEST_RANKS_PER_NODE cuts
 * it into nodes of that many ranks by world rank. */
static void split_by_node(void **state) {
  (void)state;
  const char *setting = getenv("COMM_TEST_RANKS_PER_NODE");
  int per_node = setting != NULL && atoi(setting) > 0 ? atoi(setting) : size;
  int nodes, node;
  OK(comm_node_count(&nodes, world));
  OK(comm_node_id(&node, world));
  assert_int_equal(nodes, (size + per_node - 1) / per_node);
  assert_int_equal(node, rank / per_node);
  comm_t *mine = NULL;
  OK(comm_split_by_node(&mine, world, NULL));
  int members[64], n = 0;
  for (int w = node * per_node; w < size && w < (node + 1) * per_node; ++w) members[n++] = w;
  check_group(mine, members, n, 50 + node);
  OK(comm_node_count(&nodes, mine));
  OK(comm_node_id(&node, mine));
  assert_int_equal(nodes, 1);
  assert_int_equal(node, 0);
  OK(comm_destroy(mine));
}

/* ------------------------------------------------------------- mismatch */

/* One rank (the last) calls something other than the rest. */
typedef comm_status_t (*call_fn)(int deviant);

/* Runs `call` on every rank, then checks: each rank got OK or MISMATCH, at
 * least one got MISMATCH with a message naming both sides (containing
 * `naming`), no rank waited for the timeout instead of being told, and the world still
 * runs a barrier and an all_reduce correctly. */
static void expect_mismatch_naming(call_fn call, const char *what, const char *naming) {
  if (size < 2) skip();
  OK(comm_barrier(world, NULL));
  double start = monotonic_seconds();
  comm_status_t status = call(rank == size - 1);
  double took = monotonic_seconds() - start;
  int named = status == COMM_ERR_MISMATCH && strstr(comm_last_error(), naming) != NULL;
  if (status != COMM_OK) print_message("rank %d, %s: %s\n", rank, what, comm_last_error());
  assert_true(status == COMM_OK || status == COMM_ERR_MISMATCH);
  if (took > half_the_timeout()) {
    fail_msg("%s: rank %d waited %.1f s for a collective its peers disagreed on", what, rank, took);
  }

  OK(comm_barrier(world, NULL));
  int32_t mine = rank + 1, sum = 0;
  comm_tensor_t *ti = tensor(&mine, COMM_INT32, 1, 1), *to = tensor(&sum, COMM_INT32, 1, 1);
  OK(comm_all_reduce(world, ti, to, COMM_OP_SUM, NULL));
  assert_int_equal(sum, size * (size + 1) / 2);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  int named_on[64];
  gather_ints(world, named, named_on);
  int any = 0;
  for (int r = 0; r < size; ++r) any |= named_on[r];
  if (!any) fail_msg("%s: no rank reported a mismatch naming both sides", what);
}

/* Signature mismatches name both ranks' calls: "rank 0 ... vs rank 1 ...". */
static void expect_mismatch(call_fn call, const char *what) { expect_mismatch_naming(call, what, "vs rank"); }

static comm_status_t broadcast_of(comm_dtype_t dtype, int64_t count, int root) {
  double data[16] = {0};
  comm_tensor_t *t = tensor(data, dtype, count, 1);
  comm_status_t status = comm_broadcast(world, t, t, root, NULL);
  comm_tensor_destroy(t);
  return status;
}

static comm_status_t all_gather_of(comm_dtype_t dtype, int64_t count) {
  double in[16] = {0}, out[16 * 64];
  comm_tensor_t *ti = tensor(in, dtype, count, 1), *to = tensor(out, dtype, count * size, 1);
  comm_status_t status = comm_all_gather(world, ti, to, NULL);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  return status;
}

static comm_status_t different_collective(int deviant) {
  return deviant ? all_gather_of(COMM_FLOAT32, 4) : broadcast_of(COMM_FLOAT32, 4, 0);
}

static comm_status_t different_dtype(int deviant) { return all_gather_of(deviant ? COMM_INT32 : COMM_FLOAT32, 4); }

static comm_status_t different_count(int deviant) { return broadcast_of(COMM_FLOAT32, deviant ? 8 : 7, 0); }

/* 2 floats fit a narrow board entry, 8 do not: the root publishes in one lane, the deviant waits in the other. */
static comm_status_t different_lane(int deviant) { return broadcast_of(COMM_FLOAT32, deviant ? 8 : 2, 0); }

/* The root's gather reads the leaves' narrow entries; the deviant's all_gather waits in the wide lane. */
static comm_status_t rooted_vs_symmetric(int deviant) {
  if (deviant) return all_gather_of(COMM_FLOAT32, 1);
  float in = 1, out[64];
  comm_tensor_t *ti = tensor(&in, COMM_FLOAT32, 1, 1), *to = tensor(out, COMM_FLOAT32, size, 1);
  comm_status_t status = comm_gather(world, ti, rank == 0 ? to : NULL, 0, NULL);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  return status;
}

static comm_status_t different_root(int deviant) { return broadcast_of(COMM_FLOAT32, 4, deviant ? 0 : size - 1); }

static comm_status_t different_op(int deviant) {
  float in[4] = {1, 2, 3, 4}, out[4];
  comm_tensor_t *ti = tensor(in, COMM_FLOAT32, 4, 1), *to = tensor(out, COMM_FLOAT32, 4, 1);
  comm_status_t status = comm_all_reduce(world, ti, to, deviant ? COMM_OP_MAX : COMM_OP_SUM, NULL);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  return status;
}

/* all_to_all_single where rank 0 sends every rank 3 x 256 KiB + 5 bytes and
 * the deviant expects 256 KiB less from it. The splits are not part of the
 * signature: through shared memory the block is one message of the wrong
 * size; over the network both ends cut it into chunks, the same first ones,
 * and only the size sent ahead of them shows the difference. */
enum { kSplitChunk = 256 * 1024, kSplitBlock = 3 * kSplitChunk + 5 };
#define SPLIT_EXPECTED "524293" /* kSplitBlock - kSplitChunk, in the messages */

/* all_to_all_single of `block` bytes to every rank, where the deviant
 * expects `from0` more bytes from rank 0 and `from1` more from rank 1. */
static comm_status_t all_to_all_expecting(int deviant, int64_t block, int64_t from0, int64_t from1) {
  int64_t in_splits[64], out_splits[64], in_rows = 0, out_rows = 0;
  for (int p = 0; p < size; ++p) {
    in_splits[p] = block;
    out_splits[p] = block + (deviant && p == 0 ? from0 : deviant && p == 1 ? from1 : 0);
    in_rows += in_splits[p];
    out_rows += out_splits[p];
  }
  uint8_t *in = calloc((size_t)in_rows, 1), *out = malloc((size_t)out_rows);
  assert_non_null(in);
  assert_non_null(out);
  comm_tensor_t *ti = tensor(in, COMM_UINT8, in_rows, 1), *to = tensor(out, COMM_UINT8, out_rows, 1);
  comm_status_t status = comm_all_to_all_single(world, ti, to, out_splits, in_splits, NULL);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(in);
  free(out);
  return status;
}

static comm_status_t different_split(int deviant) {
  return all_to_all_expecting(deviant, kSplitBlock, -kSplitChunk, 0);
}

static void mismatched_all_to_all_split(void **state) {
  (void)state;
  expect_mismatch_naming(different_split, "all_to_all split 786437 vs 524293 bytes", SPLIT_EXPECTED);
}

/* The deviant expects one byte less from rank 0 and one more from rank 1,
 * as much in all: the hierarchical all_to_all carries small blocks of two
 * ranks of a node in one message across nodes, whose size alone cannot
 * show it; large ones go each on its own. */
static comm_status_t different_split_same_total(int deviant) {
  return all_to_all_expecting(deviant, kSplitBlock, -1, 1);
}

static comm_status_t different_small_split_same_total(int deviant) { return all_to_all_expecting(deviant, 2, -1, 1); }

static void mismatched_all_to_all_splits_of_one_total(void **state) {
  (void)state;
  if (size < 3) skip(); /* the deviant must be neither rank 0 nor rank 1 */
  expect_mismatch_naming(different_split_same_total, "all_to_all splits 786437 vs 786436 and 786438 bytes", "expect");
  expect_mismatch_naming(different_small_split_same_total, "small all_to_all splits 2 vs 1 and 3 bytes",
                         "comm_all_to_all_single");
}

/* A small all_to_all_single where the deviant expects one byte less from
 * rank 0: through shared memory the blocks travel on the node board, whose
 * check must still name the call the user made. */
static comm_status_t different_small_split(int deviant) { return all_to_all_expecting(deviant, 2, -1, 0); }

static void mismatched_small_all_to_all_split(void **state) {
  (void)state;
  expect_mismatch_naming(different_small_split, "small all_to_all_single split 2 vs 1 bytes", "comm_all_to_all_single");
}

static void mismatched_collective(void **state) {
  (void)state;
  expect_mismatch(different_collective, "broadcast vs all_gather");
}

static void mismatched_dtype(void **state) {
  (void)state;
  expect_mismatch(different_dtype, "float32 vs int32");
}

static void mismatched_count(void **state) {
  (void)state;
  expect_mismatch(different_count, "7 vs 8 elements");
}

static void mismatched_op(void **state) {
  (void)state;
  expect_mismatch(different_op, "sum vs max");
}

static void mismatched_lane(void **state) {
  (void)state;
  expect_mismatch(different_lane, "2 vs 8 elements, narrow vs wide board lane");
}

static void mismatched_rooted_and_symmetric(void **state) {
  (void)state;
  expect_mismatch(rooted_vs_symmetric, "gather vs all_gather");
}

static void mismatched_root(void **state) {
  (void)state;
  expect_mismatch(different_root, "root size-1 vs 0");
}

int main(int argc, char **argv) {
  if (join_world() != 0) return 1;
  if (size > 64) {
    fprintf(stderr, "groups_test handles at most 64 ranks\n");
    return 1;
  }
  const struct CMUnitTest groups[] = {
      cmocka_unit_test(group_without_world_rank_0),  cmocka_unit_test(two_disjoint_groups_at_once),
      cmocka_unit_test(generated_and_world_names),   cmocka_unit_test(split_orders_by_key_then_parent_rank),
      cmocka_unit_test(split_with_undefined_colour), cmocka_unit_test(split_by_node),
      cmocka_unit_test(destroy_while_peers_finish),
  };
  const struct CMUnitTest mismatches[] = {
      cmocka_unit_test(mismatched_collective),
      cmocka_unit_test(mismatched_dtype),
      cmocka_unit_test(mismatched_count),
      cmocka_unit_test(mismatched_op),
      cmocka_unit_test(mismatched_root),
      cmocka_unit_test(mismatched_lane),
      cmocka_unit_test(mismatched_rooted_and_symmetric),
      cmocka_unit_test(mismatched_all_to_all_split),
      cmocka_unit_test(mismatched_all_to_all_splits_of_one_total),
      cmocka_unit_test(mismatched_small_all_to_all_split),
  };
  int failed = argc > 1 && strcmp(argv[1], "mismatch") == 0 ? cmocka_run_group_tests(mismatches, NULL, NULL)
                                                            : cmocka_run_group_tests(groups, NULL, NULL);
  comm_destroy(world);
  return failed;
}
