/* The data-movement collectives through commrun at any rank count, over shm
 * or tcp: broadcast, all_gather(_v), gather(_v), scatter(_v),
 * all_to_all(_single) and barrier, each compared byte for byte with what the
 * ranks' patterns say it must be (data_patterns.h), for every dtype (moving
 * data ignores the values, but each dtype's element size must be honoured:
 * the guard zones catch a byte too many), element counts 0, 1, 7 and
 * 1 Mi + 3, roots 0 and size-1, in place where the API allows it, and
 * asynchronously through handles. COMM_ALGO, when set, forces the algorithms
 * (tests/multiproc/CMakeLists.txt registers those runs).
 *
 * The 1 Mi + 3 count runs for uint8 and float64 only (element sizes 1 and 8),
 * the extremes; the other dtypes take the small counts. That keeps a run at
 * 8 ranks on two cores well inside its time and memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "comm.h"
#include "data_patterns.h"
#include "world.h"

static const int64_t kSmallCounts[] = {0, 1, 7};
static const int64_t kLargeCount = (1 << 20) + 3;

static int takes_large_count(comm_dtype_t dtype) { return dtype == COMM_UINT8 || dtype == COMM_FLOAT64; }

/* Run `body(dtype, count, root)` for every dtype, count and root (0 and
 * size-1; one root when they are the same). */
typedef void (*case_fn)(comm_dtype_t dtype, int64_t count, int root);

static void for_every_case(case_fn body, int with_roots) {
  int roots[2] = {0, size - 1};
  int nroots = with_roots && size > 1 ? 2 : 1;
  for (int d = 0; d < kDtypeCount; ++d) {
    for (int c = 0; c < 4; ++c) {
      int64_t count = c < 3 ? kSmallCounts[c] : kLargeCount;
      if (c == 3 && !takes_large_count(kAllDtypes[d])) continue;
      for (int r = 0; r < nroots; ++r) body(kAllDtypes[d], count, roots[r]);
    }
  }
}

/* ---------------------------------------------------------------- broadcast */

enum { kSeparate, kInPlace, kOutNull };

static void broadcast_case_mode(comm_dtype_t dtype, int64_t count, int root, int mode) {
  size_t bytes = (size_t)count * comm_dtype_size(dtype);
  uint8_t *in = guarded(bytes), *out = guarded(bytes);
  comm_tensor_t *ti = NULL, *to = tensor(out, dtype, count, 1);
  uint8_t *result = out;
  if (rank == root) {
    fill(in, bytes, root, 1);
    ti = tensor(in, dtype, count, 1);
    if (mode != kSeparate) {
      comm_tensor_destroy(to);
      to = mode == kInPlace ? ti : NULL;
      result = in;
    }
  }
  OK(comm_broadcast(world, ti, to, root, NULL));
  expect_pattern(result, bytes, root, 1, "broadcast");
  expect_guard(result, bytes, "broadcast");
  if (to != ti) comm_tensor_destroy(to);
  comm_tensor_destroy(ti);
  free(in);
  free(out);
}

static void broadcast_case(comm_dtype_t dtype, int64_t count, int root) {
  broadcast_case_mode(dtype, count, root, kSeparate);
  broadcast_case_mode(dtype, count, root, count == kLargeCount ? kOutNull : kInPlace);
}

static void broadcast_every_dtype_count_and_root(void **state) {
  (void)state;
  for_every_case(broadcast_case, 1);
}

/* --------------------------------------------------------------- all_gather */

static void all_gather_case_mode(comm_dtype_t dtype, int64_t count, int in_place) {
  size_t bytes = (size_t)count * comm_dtype_size(dtype);
  uint8_t *out = guarded(bytes * size);
  uint8_t *own = in_place ? NULL : guarded(bytes);
  uint8_t *in = in_place ? out + bytes * rank : own;
  fill(in, bytes, rank, 2);
  comm_tensor_t *ti = tensor(in, dtype, count, 1), *to = tensor(out, dtype, count * size, 1);
  OK(comm_all_gather(world, ti, to, NULL));
  for (int r = 0; r < size; ++r) expect_pattern(out + bytes * r, bytes, r, 2, "all_gather");
  expect_guard(out, bytes * size, "all_gather");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(out);
}

static void all_gather_case(comm_dtype_t dtype, int64_t count, int root) {
  (void)root;
  all_gather_case_mode(dtype, count, 0);
  all_gather_case_mode(dtype, count, 1);
}

static void all_gather_every_dtype_and_count(void **state) {
  (void)state;
  for_every_case(all_gather_case, 0);
}

/* ------------------------------------------------------- uneven row counts */

/* Row counts per rank for the V collectives, with empty ranks. */
enum { kLayoutMixed, kLayoutAllEmpty, kLayoutLastOnly, kLayoutLarge, kLayoutCount };

static void layout_counts(int layout, int64_t *counts) {
  for (int r = 0; r < size; ++r) {
    switch (layout) {
      case kLayoutMixed: counts[r] = r % 3 == 1 ? 0 : r + 1; break;
      case kLayoutAllEmpty: counts[r] = 0; break;
      case kLayoutLastOnly: counts[r] = r == size - 1 ? 5 : 0; break;
      default: counts[r] = r % 2 == 1 ? 0 : (1 << 17) + 3 * r; break;
    }
  }
}

/* Rows have this many elements in the V cases, so rows and elements differ. */
enum { kRowElements = 3 };

typedef struct {
  int64_t counts[64];
  size_t bytes[64];
  size_t offsets[64];
  size_t total;
  int64_t total_rows;
} layout_t;

static layout_t make_layout(int which, comm_dtype_t dtype) {
  layout_t l;
  assert_true(size <= 64);
  layout_counts(which, l.counts);
  l.total = 0;
  l.total_rows = 0;
  for (int r = 0; r < size; ++r) {
    l.bytes[r] = (size_t)l.counts[r] * kRowElements * comm_dtype_size(dtype);
    l.offsets[r] = l.total;
    l.total += l.bytes[r];
    l.total_rows += l.counts[r];
  }
  return l;
}

/* Every dtype with the small layouts; uint8 and float64 with the large one. */
typedef void (*v_case_fn)(comm_dtype_t dtype, int layout, int root, int in_place);

static void for_every_v_case(v_case_fn body, int with_roots) {
  int roots[2] = {0, size - 1};
  int nroots = with_roots && size > 1 ? 2 : 1;
  for (int d = 0; d < kDtypeCount; ++d) {
    for (int layout = 0; layout < kLayoutCount; ++layout) {
      if (layout == kLayoutLarge && !takes_large_count(kAllDtypes[d])) continue;
      for (int r = 0; r < nroots; ++r) {
        body(kAllDtypes[d], layout, roots[r], 0);
        body(kAllDtypes[d], layout, roots[r], 1);
      }
    }
  }
}

static void all_gather_v_case(comm_dtype_t dtype, int which, int root, int in_place) {
  (void)root;
  layout_t l = make_layout(which, dtype);
  uint8_t *out = guarded(l.total);
  uint8_t *own = in_place ? NULL : guarded(l.bytes[rank]);
  uint8_t *in = in_place ? out + l.offsets[rank] : own;
  fill(in, l.bytes[rank], rank, 3);
  comm_tensor_t *ti = tensor(in, dtype, l.counts[rank], kRowElements);
  comm_tensor_t *to = tensor(out, dtype, l.total_rows, kRowElements);
  OK(comm_all_gather_v(world, ti, to, l.counts, NULL));
  for (int r = 0; r < size; ++r) expect_pattern(out + l.offsets[r], l.bytes[r], r, 3, "all_gather_v");
  expect_guard(out, l.total, "all_gather_v");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(out);
}

static void all_gather_v_uneven_and_empty_blocks(void **state) {
  (void)state;
  for_every_v_case(all_gather_v_case, 0);
}

/* ------------------------------------------------------------------- gather */

static void gather_case_mode(comm_dtype_t dtype, int64_t count, int root, int in_place) {
  size_t bytes = (size_t)count * comm_dtype_size(dtype);
  int is_root = rank == root;
  uint8_t *out = guarded(is_root ? bytes * size : 0);
  uint8_t *own = in_place && is_root ? NULL : guarded(bytes);
  uint8_t *in = own ? own : out + bytes * rank;
  fill(in, bytes, rank, 4);
  comm_tensor_t *ti = tensor(in, dtype, count, 1), *to = is_root ? tensor(out, dtype, count * size, 1) : NULL;
  OK(comm_gather(world, ti, to, root, NULL));
  if (is_root) {
    for (int r = 0; r < size; ++r) expect_pattern(out + bytes * r, bytes, r, 4, "gather");
    expect_guard(out, bytes * size, "gather");
  }
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(out);
}

static void gather_case(comm_dtype_t dtype, int64_t count, int root) {
  gather_case_mode(dtype, count, root, 0);
  gather_case_mode(dtype, count, root, 1);
}

static void gather_every_dtype_count_and_root(void **state) {
  (void)state;
  for_every_case(gather_case, 1);
}

static void gather_v_case(comm_dtype_t dtype, int which, int root, int in_place) {
  layout_t l = make_layout(which, dtype);
  int is_root = rank == root;
  uint8_t *out = guarded(is_root ? l.total : 0);
  uint8_t *own = in_place && is_root ? NULL : guarded(l.bytes[rank]);
  uint8_t *in = own ? own : out + l.offsets[rank];
  fill(in, l.bytes[rank], rank, 5);
  comm_tensor_t *ti = tensor(in, dtype, l.counts[rank], kRowElements);
  comm_tensor_t *to = is_root ? tensor(out, dtype, l.total_rows, kRowElements) : NULL;
  OK(comm_gather_v(world, ti, to, l.counts, root, NULL));
  if (is_root) {
    for (int r = 0; r < size; ++r) expect_pattern(out + l.offsets[r], l.bytes[r], r, 5, "gather_v");
    expect_guard(out, l.total, "gather_v");
  }
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(out);
}

static void gather_v_uneven_and_empty_blocks(void **state) {
  (void)state;
  for_every_v_case(gather_v_case, 1);
}

/* ------------------------------------------------------------------ scatter */

static void scatter_case_mode(comm_dtype_t dtype, int64_t count, int root, int in_place) {
  size_t bytes = (size_t)count * comm_dtype_size(dtype);
  int is_root = rank == root;
  uint8_t *in = guarded(is_root ? bytes * size : 0);
  if (is_root) {
    for (int r = 0; r < size; ++r) fill(in + bytes * r, bytes, r, 6);
  }
  uint8_t *own = in_place && is_root ? NULL : guarded(bytes);
  uint8_t *out = own ? own : in + bytes * rank;
  comm_tensor_t *ti = is_root ? tensor(in, dtype, count * size, 1) : NULL, *to = tensor(out, dtype, count, 1);
  OK(comm_scatter(world, ti, to, root, NULL));
  expect_pattern(out, bytes, rank, 6, "scatter");
  if (own) expect_guard(own, bytes, "scatter");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(in);
}

static void scatter_case(comm_dtype_t dtype, int64_t count, int root) {
  scatter_case_mode(dtype, count, root, 0);
  scatter_case_mode(dtype, count, root, 1);
}

static void scatter_every_dtype_count_and_root(void **state) {
  (void)state;
  for_every_case(scatter_case, 1);
}

static void scatter_v_case(comm_dtype_t dtype, int which, int root, int in_place) {
  layout_t l = make_layout(which, dtype);
  int is_root = rank == root;
  uint8_t *in = guarded(is_root ? l.total : 0);
  if (is_root) {
    for (int r = 0; r < size; ++r) fill(in + l.offsets[r], l.bytes[r], r, 7);
  }
  uint8_t *own = in_place && is_root ? NULL : guarded(l.bytes[rank]);
  uint8_t *out = own ? own : in + l.offsets[rank];
  comm_tensor_t *ti = is_root ? tensor(in, dtype, l.total_rows, kRowElements) : NULL;
  comm_tensor_t *to = tensor(out, dtype, l.counts[rank], kRowElements);
  OK(comm_scatter_v(world, ti, to, l.counts, root, NULL));
  expect_pattern(out, l.bytes[rank], rank, 7, "scatter_v");
  if (own) expect_guard(own, l.bytes[rank], "scatter_v");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(own);
  free(in);
}

static void scatter_v_uneven_and_empty_blocks(void **state) {
  (void)state;
  for_every_v_case(scatter_v_case, 1);
}

/* --------------------------------------------------------------- all_to_all */

/* The block rank `from` sends rank `to` is the pattern of "owner" from*size+to. */
static int pair_owner(int from, int to) { return from * size + to; }

static void all_to_all_single_even_case(comm_dtype_t dtype, int64_t count, int root) {
  (void)root;
  size_t bytes = (size_t)count * comm_dtype_size(dtype);
  uint8_t *in = guarded(bytes * size), *out = guarded(bytes * size);
  for (int p = 0; p < size; ++p) fill(in + bytes * p, bytes, pair_owner(rank, p), 8);
  comm_tensor_t *ti = tensor(in, dtype, count * size, 1), *to = tensor(out, dtype, count * size, 1);
  OK(comm_all_to_all_single(world, ti, to, NULL, NULL, NULL));
  for (int p = 0; p < size; ++p) expect_pattern(out + bytes * p, bytes, pair_owner(p, rank), 8, "all_to_all_single");
  expect_guard(out, bytes * size, "all_to_all_single");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(in);
  free(out);
}

static void all_to_all_single_every_dtype_and_count(void **state) {
  (void)state;
  for (int d = 0; d < kDtypeCount; ++d) {
    for (int c = 0; c < 3; ++c) all_to_all_single_even_case(kAllDtypes[d], kSmallCounts[c], 0);
  }
  /* The large count per peer for uint8 only: float64 would need 64 MiB a buffer at 8 ranks. */
  all_to_all_single_even_case(COMM_UINT8, kLargeCount, 0);
}

/* How large the blocks of a splits case are. */
enum split_sizes {
  kSmallSplits, /* a few rows, zero for some pairs */
  kZeroSplits,  /* none at all */
  kMixedSplits, /* 100,000 more rows to even ranks: a node's blocks for one
                   rank can be too large for the hierarchical algorithm to
                   stack, and small for the next */
};

/* Rows rank `from` sends rank `to` with splits. */
static int64_t split_rows(int from, int to, enum split_sizes sizes) {
  if (sizes == kZeroSplits) return 0;
  return (from + 2 * to) % 4 + (sizes == kMixedSplits && to % 2 == 0 ? 100000 : 0);
}

static void all_to_all_single_splits_case(comm_dtype_t dtype, enum split_sizes sizes) {
  enum { kCols = 2 };
  size_t row_bytes = kCols * comm_dtype_size(dtype);
  int64_t in_splits[64], out_splits[64];
  size_t in_at[64], out_at[64], in_rows = 0, out_rows = 0;
  assert_true(size <= 64);
  for (int p = 0; p < size; ++p) {
    in_splits[p] = split_rows(rank, p, sizes);
    out_splits[p] = split_rows(p, rank, sizes);
    in_at[p] = in_rows * row_bytes;
    out_at[p] = out_rows * row_bytes;
    in_rows += (size_t)in_splits[p];
    out_rows += (size_t)out_splits[p];
  }
  uint8_t *in = guarded(in_rows * row_bytes), *out = guarded(out_rows * row_bytes);
  for (int p = 0; p < size; ++p) fill(in + in_at[p], (size_t)in_splits[p] * row_bytes, pair_owner(rank, p), 9);
  comm_tensor_t *ti = tensor(in, dtype, (int64_t)in_rows, kCols), *to = tensor(out, dtype, (int64_t)out_rows, kCols);
  OK(comm_all_to_all_single(world, ti, to, out_splits, in_splits, NULL));
  for (int p = 0; p < size; ++p) {
    expect_pattern(out + out_at[p], (size_t)out_splits[p] * row_bytes, pair_owner(p, rank), 9, "all_to_all_single");
  }
  expect_guard(out, out_rows * row_bytes, "all_to_all_single");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(in);
  free(out);
}

static void all_to_all_single_with_splits_and_zero_splits(void **state) {
  (void)state;
  for (int d = 0; d < kDtypeCount; ++d) {
    all_to_all_single_splits_case(kAllDtypes[d], kSmallSplits);
    all_to_all_single_splits_case(kAllDtypes[d], kZeroSplits);
  }
  all_to_all_single_splits_case(COMM_UINT8, kMixedSplits);
}

static void all_to_all_single_dim0_not_divisible_is_invalid(void **state) {
  (void)state;
  if (size == 1) skip(); /* every dim 0 divides by 1 */
  float in[64], out[64];
  comm_tensor_t *ti = tensor(in, COMM_FLOAT32, 2 * size + 1, 1), *to = tensor(out, COMM_FLOAT32, 2 * size + 1, 1);
  assert_int_equal(comm_all_to_all_single(world, ti, to, NULL, NULL, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(comm_last_error(), "divide"));
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  /* Nothing was started: the next collective runs normally. */
  OK(comm_barrier(world, NULL));
}

/* all_to_all with lists: rank r sends rank p a [(r+p)%3+1, p+1] tensor of
 * `dtype`; the receiver describes the same bytes as a flat vector. */
static int64_t list_rows(int from, int to) { return (from + to) % 3 + 1; }

static void all_to_all_lists_case(comm_dtype_t dtype) {
  size_t es = comm_dtype_size(dtype);
  comm_tensor_t *ins[64], *outs[64];
  uint8_t *in_data[64], *out_data[64];
  size_t out_bytes[64];
  assert_true(size <= 64);
  for (int p = 0; p < size; ++p) {
    size_t in_bytes = (size_t)(list_rows(rank, p) * (p + 1)) * es;
    in_data[p] = guarded(in_bytes);
    fill(in_data[p], in_bytes, pair_owner(rank, p), 10);
    ins[p] = tensor(in_data[p], dtype, list_rows(rank, p), p + 1);
    int64_t flat = list_rows(p, rank) * (rank + 1);
    out_bytes[p] = (size_t)flat * es;
    out_data[p] = guarded(out_bytes[p]);
    outs[p] = tensor(out_data[p], dtype, flat, 1);
  }
  OK(comm_all_to_all(world, size, (const comm_tensor_t *const *)ins, size, outs, NULL));
  for (int p = 0; p < size; ++p) {
    expect_pattern(out_data[p], out_bytes[p], pair_owner(p, rank), 10, "all_to_all");
    expect_guard(out_data[p], out_bytes[p], "all_to_all");
    comm_tensor_destroy(ins[p]);
    comm_tensor_destroy(outs[p]);
    free(in_data[p]);
    free(out_data[p]);
  }
}

static void all_to_all_lists_of_different_shapes(void **state) {
  (void)state;
  for (int d = 0; d < kDtypeCount; ++d) all_to_all_lists_case(kAllDtypes[d]);
}

static void all_to_all_self_entry_in_place(void **state) {
  (void)state;
  comm_tensor_t *ins[64], *outs[64];
  int32_t in_data[64], out_data[64];
  for (int p = 0; p < size; ++p) {
    in_data[p] = rank * 1000 + p;
    out_data[p] = -1;
    ins[p] = tensor(&in_data[p], COMM_INT32, 1, 1);
    outs[p] = p == rank ? ins[p] : tensor(&out_data[p], COMM_INT32, 1, 1);
  }
  OK(comm_all_to_all(world, size, (const comm_tensor_t *const *)ins, size, outs, NULL));
  for (int p = 0; p < size; ++p) {
    assert_int_equal(p == rank ? in_data[p] : out_data[p], p * 1000 + rank);
    if (p != rank) comm_tensor_destroy(outs[p]);
    comm_tensor_destroy(ins[p]);
  }
}

static void all_to_all_mixed_dtypes_is_invalid(void **state) {
  (void)state;
  comm_tensor_t *ins[64], *outs[64];
  double data[64][2];
  for (int p = 0; p < size; ++p) {
    comm_dtype_t dtype = p == size - 1 ? COMM_INT32 : COMM_FLOAT32;
    ins[p] = tensor(data[p], dtype, 1, 1);
    outs[p] = tensor(data[p] + 1, COMM_FLOAT32, 1, 1);
  }
  /* With one rank the only input is int32 and the output float32. */
  assert_int_equal(comm_all_to_all(world, size, (const comm_tensor_t *const *)ins, size, outs, NULL),
                   COMM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(comm_last_error(), "int32"));
  for (int p = 0; p < size; ++p) {
    comm_tensor_destroy(ins[p]);
    comm_tensor_destroy(outs[p]);
  }
  OK(comm_barrier(world, NULL));
}

/* ------------------------------------------------------------------ barrier */

/* No rank leaves a barrier before the last rank has entered it; the last
 * rank comes late, so a barrier that let anyone through early would show. */
static void barrier_waits_for_the_last_rank(void **state) {
  (void)state;
  OK(comm_barrier(world, NULL));
  if (rank == size - 1) usleep(300 * 1000);
  double entered = monotonic_seconds();
  OK(comm_barrier(world, NULL));
  double left = monotonic_seconds();
  double last_entry = largest_of_all(entered);
  assert_true(last_entry > 0);
  if (left < last_entry) {
    fail_msg("rank %d left the barrier %.6f s before the last rank entered it", rank, last_entry - left);
  }
  comm_handle_t *handle = NULL;
  OK(comm_barrier(world, &handle));
  OK(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(handle));
}

/* -------------------------------------------------------------------- async */

static void several_collectives_in_flight_through_handles(void **state) {
  (void)state;
  enum { kCount = 1000 };
  const size_t bytes = kCount * sizeof(float);
  int root = size - 1;
  uint8_t *bcast = guarded(bytes), *gathered = guarded(bytes * size), *mine = guarded(bytes);
  uint8_t *at_root = guarded(bytes * size);
  uint8_t *scattered = guarded(bytes), *to_scatter = guarded(bytes * size);
  uint8_t *a2a_in = guarded(bytes * size), *a2a_out = guarded(bytes * size);
  fill(mine, bytes, rank, 11);
  if (rank == root) {
    fill(bcast, bytes, root, 12);
    for (int r = 0; r < size; ++r) fill(to_scatter + bytes * r, bytes, r, 13);
  }
  for (int p = 0; p < size; ++p) fill(a2a_in + bytes * p, bytes, pair_owner(rank, p), 14);
  comm_tensor_t *tb = tensor(bcast, COMM_FLOAT32, kCount, 1);
  comm_tensor_t *tmine = tensor(mine, COMM_FLOAT32, kCount, 1);
  comm_tensor_t *tgathered = tensor(gathered, COMM_FLOAT32, kCount * size, 1);
  comm_tensor_t *tat_root = tensor(at_root, COMM_FLOAT32, kCount * size, 1);
  comm_tensor_t *tscattered = tensor(scattered, COMM_FLOAT32, kCount, 1);
  comm_tensor_t *tto_scatter = tensor(to_scatter, COMM_FLOAT32, kCount * size, 1);
  comm_tensor_t *ta2a_in = tensor(a2a_in, COMM_FLOAT32, kCount * size, 1);
  comm_tensor_t *ta2a_out = tensor(a2a_out, COMM_FLOAT32, kCount * size, 1);
  comm_handle_t *h[6];
  OK(comm_broadcast(world, tb, tb, root, &h[0]));
  OK(comm_all_gather(world, tmine, tgathered, &h[1]));
  OK(comm_scatter(world, tto_scatter, tscattered, root, &h[2]));
  OK(comm_barrier(world, &h[3]));
  OK(comm_all_to_all_single(world, ta2a_in, ta2a_out, NULL, NULL, &h[4]));
  OK(comm_gather(world, tmine, rank == 0 ? tat_root : NULL, 0, &h[5]));
  /* The descriptors may go at once; the buffers stay until the handles complete. */
  comm_tensor_destroy(tb);
  comm_tensor_destroy(tmine);
  comm_tensor_destroy(tgathered);
  comm_tensor_destroy(tat_root);
  comm_tensor_destroy(tscattered);
  comm_tensor_destroy(tto_scatter);
  comm_tensor_destroy(ta2a_in);
  comm_tensor_destroy(ta2a_out);
  for (int i = 5; i >= 0; --i) {
    OK(comm_handle_wait(h[i], COMM_TIMEOUT_DEFAULT));
    OK(comm_handle_destroy(h[i]));
  }
  expect_pattern(bcast, bytes, root, 12, "async broadcast");
  for (int r = 0; r < size; ++r) {
    expect_pattern(gathered + bytes * r, bytes, r, 11, "async all_gather");
    if (rank == 0) expect_pattern(at_root + bytes * r, bytes, r, 11, "async gather");
  }
  expect_pattern(scattered, bytes, rank, 13, "async scatter");
  for (int p = 0; p < size; ++p)
    expect_pattern(a2a_out + bytes * p, bytes, pair_owner(p, rank), 14, "async all_to_all");
  free(bcast);
  free(gathered);
  free(at_root);
  free(mine);
  free(scattered);
  free(to_scatter);
  free(a2a_in);
  free(a2a_out);
}

int main(void) {
  if (join_world() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broadcast_every_dtype_count_and_root),
      cmocka_unit_test(all_gather_every_dtype_and_count),
      cmocka_unit_test(all_gather_v_uneven_and_empty_blocks),
      cmocka_unit_test(gather_every_dtype_count_and_root),
      cmocka_unit_test(gather_v_uneven_and_empty_blocks),
      cmocka_unit_test(scatter_every_dtype_count_and_root),
      cmocka_unit_test(scatter_v_uneven_and_empty_blocks),
      cmocka_unit_test(all_to_all_single_every_dtype_and_count),
      cmocka_unit_test(all_to_all_single_with_splits_and_zero_splits),
      cmocka_unit_test(all_to_all_single_dim0_not_divisible_is_invalid),
      cmocka_unit_test(all_to_all_lists_of_different_shapes),
      cmocka_unit_test(all_to_all_self_entry_in_place),
      cmocka_unit_test(all_to_all_mixed_dtypes_is_invalid),
      cmocka_unit_test(barrier_waits_for_the_last_rank),
      cmocka_unit_test(several_collectives_in_flight_through_handles),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
