/* bench_common.h - what bench/compare's MPI and Gloo programs share with each
 * other and with comm-bench, so that all of them measure the same thing:
 *
 *  - sizes are nccl-tests bytes: the per-rank buffer of all_reduce, reduce
 *    and broadcast; the whole output of all_gather and gather; the whole input
 *    of reduce_scatter, scatter (root) and all_to_all. Data is float32, the
 *    op sum, the root 0.
 *  - iterations per size: 256 MiB worth, at least 10 and at most 1000
 *    (comm-bench -n auto); 5 untimed warm-up iterations first (comm-bench -w).
 *  - each iteration is timed on its own; a rank's time is the median of its
 *    iterations, and the result is the largest of the ranks' medians
 *    (comm-bench -a max).
 *
 * Output, rank 0 only, one line per size:
 *   RESULT <collective> <bytes> <time_us> <iterations>
 *
 * C99 and C++ alike (the Gloo program includes it too). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BENCH_WARMUP = 5, BENCH_MAX_SIZES = 64 };

typedef enum bench_collective {
  BENCH_ALL_REDUCE,
  BENCH_REDUCE,
  BENCH_BROADCAST,
  BENCH_ALL_GATHER,
  BENCH_REDUCE_SCATTER,
  BENCH_GATHER,
  BENCH_SCATTER,
  BENCH_ALL_TO_ALL,
  BENCH_BARRIER,
  BENCH_UNKNOWN
} bench_collective;

static const char *const bench_collective_names[] = {
    "all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "gather", "scatter", "all_to_all", "barrier"};

static inline bench_collective bench_collective_from_name(const char *name) {
  for (int c = 0; c < (int)BENCH_UNKNOWN; ++c) {
    if (strcmp(name, bench_collective_names[c]) == 0) return (bench_collective)c;
  }
  return BENCH_UNKNOWN;
}

/* Elements per rank (per block) for `bytes` of nccl-tests size. */
static inline size_t bench_count(bench_collective c, size_t bytes, int ranks) {
  switch (c) {
    case BENCH_ALL_GATHER:
    case BENCH_REDUCE_SCATTER:
    case BENCH_GATHER:
    case BENCH_SCATTER:
    case BENCH_ALL_TO_ALL: return bytes / sizeof(float) / (size_t)ranks;
    case BENCH_BARRIER: return 0;
    default: return bytes / sizeof(float);
  }
}

static inline int bench_iterations(size_t bytes) {
  size_t n = (256u << 20) / (bytes > 0 ? bytes : 1);
  return n < 10 ? 10 : n > 1000 ? 1000 : (int)n;
}

/* "8,64K,1M" -> sizes (K, M, G are powers of 1024). Returns how many, or -1. */
static inline int bench_parse_sizes(const char *text, size_t *sizes, int max) {
  int n = 0;
  const char *p = text;
  while (*p != '\0' && n < max) {
    char *end = NULL;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p) return -1;
    if (*end == 'K' || *end == 'k') v <<= 10, ++end;
    else if (*end == 'M' || *end == 'm') v <<= 20, ++end;
    else if (*end == 'G' || *end == 'g') v <<= 30, ++end;
    if (*end != ',' && *end != '\0') return -1;
    sizes[n++] = (size_t)v;
    p = *end == ',' ? end + 1 : end;
  }
  return *p == '\0' ? n : -1;
}

static inline double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static inline int bench_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of values[0..n) (sorts them). */
static inline double bench_median(double *values, int n) {
  qsort(values, (size_t)n, sizeof values[0], bench_compare_doubles);
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static inline void bench_print_result(bench_collective c, size_t bytes, double time_us, int iterations) {
  printf("RESULT %s %zu %.3f %d\n", bench_collective_names[c], bytes, time_us, iterations);
  fflush(stdout);
}

/* A page-aligned buffer with every page touched, so no timed call pays for
 * first-touch page faults; NULL when out of memory. */
static inline float *bench_buffer(size_t bytes, float value) {
  size_t rounded = (bytes / 4096 + 1) * 4096;
  float *b = (float *)aligned_alloc(4096, rounded);
  if (b != NULL) {
    for (size_t i = 0; i < rounded / sizeof(float); ++i) b[i] = value;
  }
  return b;
}

#endif
