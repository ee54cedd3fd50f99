/* The reducing collectives through commrun at any rank count, over shm or
 * tcp: all_reduce, reduce, reduce_scatter and reduce_scatter_v, compared
 * element by element with a reference the test computes, for every dtype x
 * every op the dtype defines, element counts 0, 1, 7 and 1 Mi + 3, roots 0
 * and size-1, in place, asynchronously through handles, and ops a dtype does
 * not define (COMM_ERR_INVALID_ARGUMENT: bitwise ops on floats, avg on
 * bool). COMM_ALGO, when set, forces the
 * algorithms (tests/multiproc/CMakeLists.txt registers those runs).
 *
 * Rank r contributes value(r, i) in {-2, -1, 1, 2} at element i (0 or 1 for
 * bool), so every sum, product, minimum and maximum over up to 8 ranks is an
 * exact small integer in every dtype, float16 and bfloat16 included, and
 * the reduction order cannot change a bit of it; AVG is checked with the
 * division the library defines. Results must match exactly.
 *
 * Inexact float data (with NaNs carrying rank-specific payloads) is checked
 * separately: every rank must get the same bits, and a second run the same
 * bits again.
 *
 * The 1 Mi + 3 count runs for four (dtype, op) pairs only: int8 bxor,
 * bfloat16 sum, float32 max and float64 avg (element sizes 1, 2, 4 and 8);
 * every other pair takes the small counts. That keeps a run at 8 ranks on
 * two cores well inside its time. reduce_scatter gives each rank `count`
 * elements for the small counts and splits the 1 Mi + 3 count among the
 * ranks (so the input stays about 1 Mi elements). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"
#include "data_patterns.h"
#include "world.h"

static const int64_t kSmallCounts[] = {0, 1, 7};
static const int64_t kLargeCount = (1 << 20) + 3;

static const comm_op_t kAllOps[] = {COMM_OP_SUM, COMM_OP_PROD, COMM_OP_MIN, COMM_OP_MAX,
                                    COMM_OP_AVG, COMM_OP_BAND, COMM_OP_BOR, COMM_OP_BXOR};
enum { kOpCount = sizeof(kAllOps) / sizeof(kAllOps[0]) };

static int is_float(comm_dtype_t d) {
  return d == COMM_FLOAT16 || d == COMM_BFLOAT16 || d == COMM_FLOAT32 || d == COMM_FLOAT64;
}
static int is_signed(comm_dtype_t d) { return d == COMM_INT8 || d == COMM_INT16 || d == COMM_INT32 || d == COMM_INT64; }
static int op_defined(comm_dtype_t d, comm_op_t op) {
  if (d == COMM_BOOL) return op != COMM_OP_AVG;
  return !is_float(d) || (op != COMM_OP_BAND && op != COMM_OP_BOR && op != COMM_OP_BXOR);
}
static int takes_large_count(comm_dtype_t d, comm_op_t op) {
  return (d == COMM_INT8 && op == COMM_OP_BXOR) || (d == COMM_BFLOAT16 && op == COMM_OP_SUM) ||
         (d == COMM_FLOAT32 && op == COMM_OP_MAX) || (d == COMM_FLOAT64 && op == COMM_OP_AVG);
}

/* Each case draws a new salt (the same on every rank: cases run in the same
 * order everywhere), so stale data from an earlier case cannot pass. */
static int next_salt = 1;

/* ------------------------------------------------------------ values */

static uint64_t mix(int r, size_t i, int salt) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)(r + 1) * 0xC2B2AE3D27D4EB4Full +
               (uint64_t)salt * 0x165667B19E3779F9ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return x;
}

static int value(int r, size_t i, int salt, comm_dtype_t d) {
  static const int kValues[] = {-2, -1, 1, 2};
  uint64_t h = mix(r, i, salt);
  return d == COMM_BOOL ? (int)((h >> 2) & 1) : kValues[h & 3];
}

/* float -> float16 / bfloat16, rounding to nearest even; normal numbers and
 * zeros (all the test produces). */
static uint16_t to_float16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  if ((x & 0x7fffffff) == 0) return sign;
  int exponent = (int)((x >> 23) & 0xff) - 127 + 15;
  assert_true(exponent >= 1 && exponent <= 30);
  uint32_t mantissa = x & 0x7fffff, rest = mantissa & 0x1fff;
  uint32_t h = sign | ((uint32_t)exponent << 10) | (mantissa >> 13);
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return (uint16_t)h;
}

static uint16_t to_bfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Element i of `p` := v (integers and bool: v modulo 2^bits; little endian). */
static void put_integer(uint8_t *p, size_t i, comm_dtype_t d, uint64_t v) {
  size_t es = comm_dtype_size(d);
  memcpy(p + i * es, &v, es);
}

static void put_float(uint8_t *p, size_t i, comm_dtype_t d, double v) {
  size_t es = comm_dtype_size(d);
  if (d == COMM_FLOAT64) {
    memcpy(p + i * es, &v, es);
  } else if (d == COMM_FLOAT32) {
    float f = (float)v;
    memcpy(p + i * es, &f, es);
  } else {
    uint16_t h = d == COMM_FLOAT16 ? to_float16((float)v) : to_bfloat16((float)v);
    memcpy(p + i * es, &h, es);
  }
}

static void put_value(uint8_t *p, size_t i, comm_dtype_t d, int v) {
  if (is_float(d)) {
    put_float(p, i, d, v);
  } else {
    put_integer(p, i, d, (uint64_t)(int64_t)v);
  }
}

/* Rank r's input: `count` elements from element `first` of the vector. */
static uint8_t *input(comm_dtype_t d, size_t first, size_t count, int salt) {
  uint8_t *p = guarded(count * comm_dtype_size(d));
  for (size_t i = 0; i < count; ++i) put_value(p, i, d, value(rank, first + i, salt, d));
  return p;
}

static int64_t sign_extend(uint64_t v, int bits) {
  if (bits == 64) return (int64_t)v;
  uint64_t top = 1ull << (bits - 1);
  v &= (1ull << bits) - 1;
  return (int64_t)((v ^ top) - top);
}

static void expected_integer(uint8_t *p, size_t i, comm_dtype_t d, comm_op_t op, int salt) {
  int bits = (int)comm_dtype_size(d) * 8;
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  int sgn = is_signed(d);
  uint64_t acc = 0;
  for (int r = 0; r < size; ++r) {
    uint64_t x = (uint64_t)(int64_t)value(r, i, salt, d) & mask;
    if (r == 0) {
      acc = x;
      continue;
    }
    switch (op) {
      case COMM_OP_SUM:
      case COMM_OP_AVG: acc += x; break;
      case COMM_OP_PROD: acc *= x; break;
      case COMM_OP_MIN:
        if (sgn ? sign_extend(x, bits) < sign_extend(acc, bits) : (x & mask) < (acc & mask)) acc = x;
        break;
      case COMM_OP_MAX:
        if (sgn ? sign_extend(x, bits) > sign_extend(acc, bits) : (x & mask) > (acc & mask)) acc = x;
        break;
      case COMM_OP_BAND: acc &= x; break;
      case COMM_OP_BOR: acc |= x; break;
      case COMM_OP_BXOR: acc ^= x; break;
    }
  }
  if (op == COMM_OP_AVG) {
    acc = sgn ? (uint64_t)(sign_extend(acc, bits) / size) : (acc & mask) / (uint64_t)size;
  }
  put_integer(p, 0, d, acc);
}

static void expected_bool(uint8_t *p, size_t i, comm_op_t op, int salt) {
  int acc = value(0, i, salt, COMM_BOOL);
  for (int r = 1; r < size; ++r) {
    int x = value(r, i, salt, COMM_BOOL);
    if (op == COMM_OP_PROD || op == COMM_OP_MIN || op == COMM_OP_BAND) {
      acc = acc && x;
    } else if (op == COMM_OP_BXOR) {
      acc = acc != x;
    } else {
      acc = acc || x;
    }
  }
  *p = (uint8_t)acc;
}

static void expected_float(uint8_t *p, size_t i, comm_dtype_t d, comm_op_t op, int salt) {
  double acc = value(0, i, salt, d);
  for (int r = 1; r < size; ++r) {
    double x = value(r, i, salt, d);
    switch (op) {
      case COMM_OP_SUM:
      case COMM_OP_AVG: acc += x; break;
      case COMM_OP_PROD: acc *= x; break;
      case COMM_OP_MIN: acc = x < acc ? x : acc; break;
      case COMM_OP_MAX: acc = x > acc ? x : acc; break;
      default: fail_msg("op %d is not defined for floats", (int)op);
    }
  }
  /* AVG divides in the dtype (float16 and bfloat16 in float32, rounded once). */
  if (op == COMM_OP_AVG) acc = d == COMM_FLOAT64 ? acc / size : (double)((float)acc / (float)size);
  put_float(p, 0, d, acc);
}

/* The reduced vector's elements [first, first + count). */
static uint8_t *expected(comm_dtype_t d, comm_op_t op, size_t first, size_t count, int salt) {
  size_t es = comm_dtype_size(d);
  uint8_t *p = malloc(count * es + 1);
  assert_non_null(p);
  for (size_t i = 0; i < count; ++i) {
    if (d == COMM_BOOL) {
      expected_bool(p + i, first + i, op, salt);
    } else if (is_float(d)) {
      expected_float(p + i * es, first + i, d, op, salt);
    } else {
      expected_integer(p + i * es, first + i, d, op, salt);
    }
  }
  return p;
}

static void expect_elements(const uint8_t *got, const uint8_t *want, size_t count, comm_dtype_t d, comm_op_t op,
                            const char *what) {
  size_t es = comm_dtype_size(d);
  if (memcmp(got, want, count * es) == 0) return;
  for (size_t i = 0; i < count; ++i) {
    if (memcmp(got + i * es, want + i * es, es) != 0) {
      uint64_t g = 0, w = 0;
      memcpy(&g, got + i * es, es);
      memcpy(&w, want + i * es, es);
      fail_msg("%s %s %s x %zu on %d ranks: element %zu is 0x%llx, expected 0x%llx", what, comm_dtype_name(d),
               comm_op_name(op), count, size, i, (unsigned long long)g, (unsigned long long)w);
    }
  }
}

static uint8_t *copy_of(const uint8_t *p, size_t bytes) {
  uint8_t *c = guarded(bytes);
  memcpy(c, p, bytes);
  return c;
}

/* ------------------------------------------------------------ one case each */

enum Placement { kSeparate, kInPlace };

static void all_reduce_case(comm_dtype_t d, comm_op_t op, int64_t count, enum Placement placement) {
  int salt = next_salt++;
  size_t bytes = (size_t)count * comm_dtype_size(d);
  uint8_t *in = input(d, 0, (size_t)count, salt);
  uint8_t *out = placement == kInPlace ? in : guarded(bytes);
  comm_tensor_t *ti = tensor(in, d, count, 1);
  comm_tensor_t *to = placement == kInPlace ? ti : tensor(out, d, count, 1);
  OK(comm_all_reduce(world, ti, to, op, NULL));
  uint8_t *want = expected(d, op, 0, (size_t)count, salt);
  expect_elements(out, want, (size_t)count, d, op, placement == kInPlace ? "all_reduce in place" : "all_reduce");
  expect_guard(out, bytes, "all_reduce");
  if (to != ti) comm_tensor_destroy(to);
  comm_tensor_destroy(ti);
  if (out != in) free(out);
  free(in);
  free(want);
}

static void reduce_case(comm_dtype_t d, comm_op_t op, int64_t count, int root, enum Placement placement) {
  int salt = next_salt++;
  size_t bytes = (size_t)count * comm_dtype_size(d);
  uint8_t *in = input(d, 0, (size_t)count, salt);
  uint8_t *out = NULL;
  comm_tensor_t *ti = tensor(in, d, count, 1), *to = NULL;
  if (rank == root) {
    out = placement == kInPlace ? in : guarded(bytes);
    to = placement == kInPlace ? ti : tensor(out, d, count, 1);
  }
  OK(comm_reduce(world, ti, to, op, root, NULL));
  if (rank == root) {
    uint8_t *want = expected(d, op, 0, (size_t)count, salt);
    expect_elements(out, want, (size_t)count, d, op, placement == kInPlace ? "reduce in place" : "reduce");
    expect_guard(out, bytes, "reduce");
    free(want);
  }
  if (to != NULL && to != ti) comm_tensor_destroy(to);
  comm_tensor_destroy(ti);
  if (out != NULL && out != in) free(out);
  free(in);
}

/* Rank r's block is counts[r] elements; the even collective when `counts`
 * is NULL (each rank `count`). */
static void reduce_scatter_case(comm_dtype_t d, comm_op_t op, int64_t count, const int64_t *counts,
                                enum Placement placement) {
  int salt = next_salt++;
  size_t es = comm_dtype_size(d);
  size_t total = 0, offset = 0;
  for (int r = 0; r < size; ++r) {
    size_t c = (size_t)(counts ? counts[r] : count);
    if (r == rank) offset = total;
    total += c;
  }
  size_t mine = (size_t)(counts ? counts[rank] : count);
  uint8_t *in = input(d, 0, total, salt);
  uint8_t *out = placement == kInPlace ? in + offset * es : guarded(mine * es);
  comm_tensor_t *ti = tensor(in, d, (int64_t)total, 1);
  comm_tensor_t *to = tensor(out, d, (int64_t)mine, 1);
  const char *what = counts ? "reduce_scatter_v" : "reduce_scatter";
  if (counts) {
    OK(comm_reduce_scatter_v(world, ti, to, counts, op, NULL));
  } else {
    OK(comm_reduce_scatter(world, ti, to, op, NULL));
  }
  uint8_t *want = expected(d, op, offset, mine, salt);
  expect_elements(out, want, mine, d, op, what);
  expect_guard(placement == kInPlace ? in : out, placement == kInPlace ? total * es : mine * es, what);
  comm_tensor_destroy(to);
  comm_tensor_destroy(ti);
  if (placement != kInPlace) free(out);
  free(in);
  free(want);
}

/* Uneven blocks with empty ones: a third of the ranks get none. */
static void uneven_counts(int64_t *counts, int64_t base) {
  for (int r = 0; r < size; ++r) counts[r] = r % 3 == 1 ? 0 : base + r;
}

static void for_every_pair(void (*body)(comm_dtype_t, comm_op_t, int64_t)) {
  for (int d = 0; d < kDtypeCount; ++d) {
    for (int o = 0; o < kOpCount; ++o) {
      if (!op_defined(kAllDtypes[d], kAllOps[o])) continue;
      for (int c = 0; c < 4; ++c) {
        if (c == 3 && !takes_large_count(kAllDtypes[d], kAllOps[o])) continue;
        body(kAllDtypes[d], kAllOps[o], c < 3 ? kSmallCounts[c] : kLargeCount);
      }
    }
  }
}

/* In place for counts 7 and up only: 7 is already below the block count at
 * 8 ranks, and every extra case costs a collective's latency. */
static int in_place_too(int64_t count) { return count >= 7; }

static void all_reduce_body(comm_dtype_t d, comm_op_t op, int64_t count) {
  all_reduce_case(d, op, count, kSeparate);
  if (in_place_too(count)) all_reduce_case(d, op, count, kInPlace);
}

/* Root 0 with a separate output, root size-1 in place (or separate). */
static void reduce_body(comm_dtype_t d, comm_op_t op, int64_t count) {
  reduce_case(d, op, count, 0, kSeparate);
  reduce_case(d, op, count, size - 1, in_place_too(count) ? kInPlace : kSeparate);
}

static int64_t per_rank(int64_t count) { return count == kLargeCount ? count / size + 1 : count; }

static void reduce_scatter_body(comm_dtype_t d, comm_op_t op, int64_t count) {
  reduce_scatter_case(d, op, per_rank(count), NULL, kSeparate);
  if (in_place_too(count)) reduce_scatter_case(d, op, per_rank(count), NULL, kInPlace);
}

static void reduce_scatter_v_body(comm_dtype_t d, comm_op_t op, int64_t count) {
  int64_t counts[64];
  uneven_counts(counts, per_rank(count));
  reduce_scatter_case(d, op, 0, counts, kSeparate);
  if (in_place_too(count)) reduce_scatter_case(d, op, 0, counts, kInPlace);
}

static void all_reduce_every_dtype_op_and_count(void **state) {
  (void)state;
  for_every_pair(all_reduce_body);
}

static void reduce_every_dtype_op_count_and_root(void **state) {
  (void)state;
  for_every_pair(reduce_body);
}

static void reduce_scatter_every_dtype_op_and_count(void **state) {
  (void)state;
  for_every_pair(reduce_scatter_body);
}

static void reduce_scatter_v_uneven_and_empty_blocks(void **state) {
  (void)state;
  for_every_pair(reduce_scatter_v_body);
}

/* Every rank's block empty but one: the others only forward. */
static void reduce_scatter_v_one_block_holds_everything(void **state) {
  (void)state;
  int64_t counts[64] = {0};
  for (int owner = 0; owner<size; owner += size> 1 ? size - 1 : 1) {
    memset(counts, 0, sizeof counts);
    counts[owner] = 100003;
    reduce_scatter_case(COMM_INT32, COMM_OP_SUM, 0, counts, kSeparate);
    reduce_scatter_case(COMM_FLOAT64, COMM_OP_MIN, 0, counts, kInPlace);
  }
}

/* Counts in rows: every row of in and out holds 3 elements. */
static void reduce_scatter_v_rows_of_several_elements(void **state) {
  (void)state;
  enum { kRow = 3 };
  int salt = next_salt++;
  int64_t counts[64];
  uneven_counts(counts, 5);
  int64_t rows = 0, first = 0;
  for (int r = 0; r < size; ++r) {
    if (r == rank) first = rows;
    rows += counts[r];
  }
  size_t es = sizeof(int16_t), mine = (size_t)counts[rank] * kRow;
  uint8_t *in = input(COMM_INT16, 0, (size_t)rows * kRow, salt), *out = guarded(mine * es);
  comm_tensor_t *ti = tensor(in, COMM_INT16, rows, kRow), *to = tensor(out, COMM_INT16, counts[rank], kRow);
  OK(comm_reduce_scatter_v(world, ti, to, counts, COMM_OP_SUM, NULL));
  uint8_t *want = expected(COMM_INT16, COMM_OP_SUM, (size_t)first * kRow, mine, salt);
  expect_elements(out, want, mine, COMM_INT16, COMM_OP_SUM, "reduce_scatter_v with rows");
  expect_guard(out, mine * es, "reduce_scatter_v with rows");
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  free(in);
  free(out);
  free(want);
}

/* ------------------------------------------------------------------ async */

/* 16 all_reduces of different dtypes, counts and data in flight at once,
 * waited in the order they were issued. */
static void sixteen_async_all_reduces_complete_in_issue_order(void **state) {
  (void)state;
  enum { kInFlight = 16 };
  struct {
    comm_dtype_t dtype;
    comm_op_t op;
    int64_t count;
    int salt;
    uint8_t *in, *out;
    comm_tensor_t *ti, *to;
    comm_handle_t *handle;
  } c[kInFlight];
  for (int k = 0; k < kInFlight; ++k) {
    c[k].dtype = kAllDtypes[k % kDtypeCount];
    c[k].op = k % 2 == 0 ? COMM_OP_SUM : COMM_OP_MAX;
    c[k].count = k % 4 == 3 ? 70001 + k : 1 + 37 * k;
    c[k].salt = next_salt++;
    size_t bytes = (size_t)c[k].count * comm_dtype_size(c[k].dtype);
    c[k].in = input(c[k].dtype, 0, (size_t)c[k].count, c[k].salt);
    c[k].out = k % 3 == 0 ? c[k].in : guarded(bytes);
    c[k].ti = tensor(c[k].in, c[k].dtype, c[k].count, 1);
    c[k].to = c[k].out == c[k].in ? c[k].ti : tensor(c[k].out, c[k].dtype, c[k].count, 1);
    OK(comm_all_reduce(world, c[k].ti, c[k].to, c[k].op, &c[k].handle));
  }
  for (int k = 0; k < kInFlight; ++k) {
    OK(comm_handle_wait(c[k].handle, COMM_TIMEOUT_DEFAULT));
    OK(comm_handle_destroy(c[k].handle));
    uint8_t *want = expected(c[k].dtype, c[k].op, 0, (size_t)c[k].count, c[k].salt);
    expect_elements(c[k].out, want, (size_t)c[k].count, c[k].dtype, c[k].op, "async all_reduce");
    free(want);
    if (c[k].to != c[k].ti) comm_tensor_destroy(c[k].to);
    comm_tensor_destroy(c[k].ti);
    if (c[k].out != c[k].in) free(c[k].out);
    free(c[k].in);
  }
}

/* reduce, reduce_scatter and reduce_scatter_v in flight together, waited
 * last to first. */
static void async_reduce_and_reduce_scatters_waited_in_reverse(void **state) {
  (void)state;
  enum { kCount = 5003 };
  int root = size - 1;
  int64_t counts[64];
  uneven_counts(counts, 301);
  size_t total_v = 0, offset_v = 0;
  for (int r = 0; r < size; ++r) {
    if (r == rank) offset_v = total_v;
    total_v += (size_t)counts[r];
  }
  int salts[3] = {next_salt++, next_salt++, next_salt++};
  uint8_t *reduce_in = input(COMM_FLOAT32, 0, kCount, salts[0]), *reduce_out = guarded(kCount * 4);
  uint8_t *rs_in = input(COMM_INT64, 0, (size_t)kCount * size, salts[1]), *rs_out = guarded(kCount * 8);
  uint8_t *rsv_in = input(COMM_UINT16, 0, total_v, salts[2]), *rsv_out = guarded((size_t)counts[rank] * 2);
  comm_tensor_t *t[6] = {
      tensor(reduce_in, COMM_FLOAT32, kCount, 1),           tensor(reduce_out, COMM_FLOAT32, kCount, 1),
      tensor(rs_in, COMM_INT64, (int64_t)kCount * size, 1), tensor(rs_out, COMM_INT64, kCount, 1),
      tensor(rsv_in, COMM_UINT16, (int64_t)total_v, 1),     tensor(rsv_out, COMM_UINT16, counts[rank], 1)};
  comm_handle_t *h[3];
  OK(comm_reduce(world, t[0], rank == root ? t[1] : NULL, COMM_OP_PROD, root, &h[0]));
  OK(comm_reduce_scatter(world, t[2], t[3], COMM_OP_BXOR, &h[1]));
  OK(comm_reduce_scatter_v(world, t[4], t[5], counts, COMM_OP_MIN, &h[2]));
  for (int i = 0; i < 6; ++i) comm_tensor_destroy(t[i]);
  for (int i = 2; i >= 0; --i) {
    OK(comm_handle_wait(h[i], COMM_TIMEOUT_DEFAULT));
    OK(comm_handle_destroy(h[i]));
  }
  uint8_t *want = expected(COMM_UINT16, COMM_OP_MIN, offset_v, (size_t)counts[rank], salts[2]);
  expect_elements(rsv_out, want, (size_t)counts[rank], COMM_UINT16, COMM_OP_MIN, "async reduce_scatter_v");
  free(want);
  want = expected(COMM_INT64, COMM_OP_BXOR, (size_t)kCount * rank, kCount, salts[1]);
  expect_elements(rs_out, want, kCount, COMM_INT64, COMM_OP_BXOR, "async reduce_scatter");
  free(want);
  if (rank == root) {
    want = expected(COMM_FLOAT32, COMM_OP_PROD, 0, kCount, salts[0]);
    expect_elements(reduce_out, want, kCount, COMM_FLOAT32, COMM_OP_PROD, "async reduce");
    free(want);
  }
  free(reduce_in);
  free(reduce_out);
  free(rs_in);
  free(rs_out);
  free(rsv_in);
  free(rsv_out);
}

/* ------------------------------------------------------------------ errors */

static void bitwise_ops_on_floats_are_invalid(void **state) {
  (void)state;
  static const comm_dtype_t kFloats[] = {COMM_FLOAT16, COMM_BFLOAT16, COMM_FLOAT32, COMM_FLOAT64};
  static const comm_op_t kBitwise[] = {COMM_OP_BAND, COMM_OP_BOR, COMM_OP_BXOR};
  double in[64] = {0}, out[64] = {0};
  int64_t counts[64];
  for (int r = 0; r < size; ++r) counts[r] = 1;
  for (int d = 0; d < 4; ++d) {
    comm_tensor_t *one = tensor(in, kFloats[d], 1, 1), *all = tensor(in, kFloats[d], size, 1);
    comm_tensor_t *res = tensor(out, kFloats[d], 1, 1);
    for (int o = 0; o < 3; ++o) {
      comm_op_t op = kBitwise[o];
      assert_int_equal(comm_all_reduce(world, one, res, op, NULL), COMM_ERR_INVALID_ARGUMENT);
      assert_non_null(strstr(comm_last_error(), comm_dtype_name(kFloats[d])));
      assert_int_equal(comm_reduce(world, one, res, op, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
      assert_int_equal(comm_reduce_scatter(world, all, res, op, NULL), COMM_ERR_INVALID_ARGUMENT);
      assert_int_equal(comm_reduce_scatter_v(world, all, res, counts, op, NULL), COMM_ERR_INVALID_ARGUMENT);
    }
    comm_tensor_destroy(one);
    comm_tensor_destroy(all);
    comm_tensor_destroy(res);
  }
  /* Nothing was started: the next collective still matches on every rank. */
  all_reduce_case(COMM_FLOAT32, COMM_OP_SUM, 7, kSeparate);
}

/* The mean of bools is no bool: avg is rejected, not read as "or". */
static void avg_of_bool_is_invalid(void **state) {
  (void)state;
  uint8_t mine = (uint8_t)(rank == 0), in[64] = {0}, out[64] = {0};
  int64_t counts[64];
  for (int r = 0; r < size; ++r) counts[r] = 1;
  comm_tensor_t *one = tensor(&mine, COMM_BOOL, 1, 1), *all = tensor(in, COMM_BOOL, size, 1);
  comm_tensor_t *res = tensor(out, COMM_BOOL, 1, 1);
  assert_int_equal(comm_all_reduce(world, one, res, COMM_OP_AVG, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(comm_last_error(), "bool"));
  assert_non_null(strstr(comm_last_error(), "avg"));
  assert_int_equal(comm_reduce(world, one, res, COMM_OP_AVG, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_reduce_scatter(world, all, res, COMM_OP_AVG, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_reduce_scatter_v(world, all, res, counts, COMM_OP_AVG, NULL), COMM_ERR_INVALID_ARGUMENT);
  /* Nothing was started; sum is "or" and prod "and" of rank 0's true and the others' false. */
  OK(comm_all_reduce(world, one, res, COMM_OP_SUM, NULL));
  assert_int_equal(out[0], 1);
  OK(comm_all_reduce(world, one, res, COMM_OP_PROD, NULL));
  assert_int_equal(out[0], size == 1 ? 1 : 0);
  comm_tensor_destroy(one);
  comm_tensor_destroy(all);
  comm_tensor_destroy(res);
}

static void unknown_op_is_invalid(void **state) {
  (void)state;
  int32_t in = 1, out = 0;
  comm_tensor_t *ti = tensor(&in, COMM_INT32, 1, 1), *to = tensor(&out, COMM_INT32, 1, 1);
  assert_int_equal(comm_all_reduce(world, ti, to, (comm_op_t)99, NULL), COMM_ERR_INVALID_ARGUMENT);
  assert_int_equal(comm_reduce(world, ti, to, (comm_op_t)-1, 0, NULL), COMM_ERR_INVALID_ARGUMENT);
  comm_tensor_destroy(ti);
  comm_tensor_destroy(to);
  all_reduce_case(COMM_INT32, COMM_OP_SUM, 1, kSeparate);
}

/* ----------------------------------------------- identical bits everywhere */

static uint64_t fnv1a(const uint8_t *p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Inexact data: random-looking values of either sign between 1 and about
 * 100 (most not representable, so sums round), and every 97th element a NaN
 * whose payload names the rank. */
static uint8_t *inexact_input(comm_dtype_t d, size_t count, int salt) {
  size_t es = comm_dtype_size(d);
  uint8_t *p = guarded(count * es);
  for (size_t i = 0; i < count; ++i) {
    uint64_t h = mix(rank, i, salt);
    if (i % 97 == 5) {
      uint64_t nan = d == COMM_FLOAT32   ? 0x7fc00000u | (uint32_t)(rank + 1)
                     : d == COMM_FLOAT64 ? 0x7ff8000000000000ull | (uint64_t)(rank + 1)
                     : d == COMM_FLOAT16 ? 0x7e00u | (uint32_t)(rank + 1)
                                         : 0x7fc0u | (uint32_t)(rank + 1);
      memcpy(p + i * es, &nan, es);
    } else {
      double v = (1.0 + (double)(h % 100000) / 997.0) * ((h >> 32) & 1 ? -1.0 : 1.0);
      put_float(p, i, d, v);
    }
  }
  return p;
}

/* Whether every rank holds `hash`: its min and max over the ranks agree. */
static void expect_same_everywhere(uint64_t hash, const char *what) {
  uint64_t lo = hash, hi = hash;
  comm_tensor_t *tlo = tensor(&lo, COMM_UINT64, 1, 1), *thi = tensor(&hi, COMM_UINT64, 1, 1);
  OK(comm_all_reduce(world, tlo, tlo, COMM_OP_MIN, NULL));
  OK(comm_all_reduce(world, thi, thi, COMM_OP_MAX, NULL));
  comm_tensor_destroy(tlo);
  comm_tensor_destroy(thi);
  if (lo != hi)
    fail_msg("%s: the ranks hold different bits (hashes %llx..%llx)", what, (unsigned long long)lo,
             (unsigned long long)hi);
}

static void inexact_all_reduce_gives_identical_bits_on_every_rank(void **state) {
  (void)state;
  static const comm_dtype_t kFloats[] = {COMM_FLOAT16, COMM_BFLOAT16, COMM_FLOAT32, COMM_FLOAT64};
  /* Sizes that the default table gives to each all_reduce algorithm. */
  static const size_t kCounts[] = {1000, 60001, 300007};
  for (int d = 0; d < 4; ++d) {
    for (int c = 0; c < 3; ++c) {
      comm_dtype_t dtype = kFloats[d];
      size_t count = kCounts[c], bytes = count * comm_dtype_size(dtype);
      int salt = next_salt++;
      uint8_t *in = inexact_input(dtype, count, salt), *out = guarded(bytes);
      comm_tensor_t *ti = tensor(in, dtype, (int64_t)count, 1), *to = tensor(out, dtype, (int64_t)count, 1);
      uint64_t first = 0;
      for (int run = 0; run < 2; ++run) {
        OK(comm_all_reduce(world, ti, to, COMM_OP_SUM, NULL));
        uint64_t hash = fnv1a(out, bytes);
        if (run == 0) first = hash;
        assert_true(hash == first);
      }
      expect_same_everywhere(first, comm_dtype_name(dtype));
      comm_tensor_destroy(ti);
      comm_tensor_destroy(to);
      free(in);
      free(out);
    }
  }
}

int main(void) {
  if (join_world() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_reduce_every_dtype_op_and_count),
      cmocka_unit_test(reduce_every_dtype_op_count_and_root),
      cmocka_unit_test(reduce_scatter_every_dtype_op_and_count),
      cmocka_unit_test(reduce_scatter_v_uneven_and_empty_blocks),
      cmocka_unit_test(reduce_scatter_v_one_block_holds_everything),
      cmocka_unit_test(reduce_scatter_v_rows_of_several_elements),
      cmocka_unit_test(sixteen_async_all_reduces_complete_in_issue_order),
      cmocka_unit_test(async_reduce_and_reduce_scatters_waited_in_reverse),
      cmocka_unit_test(bitwise_ops_on_floats_are_invalid),
      cmocka_unit_test(avg_of_bool_is_invalid),
      cmocka_unit_test(unknown_op_is_invalid),
      cmocka_unit_test(inexact_all_reduce_gives_identical_bits_on_every_rank),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
