/* Helpers of the multi-process tests that move data: byte patterns that name
 * their owner (so a misplaced or shifted block shows), buffers with a guard
 * zone behind them (so a byte too many shows), tensor descriptors, and a
 * status check that prints comm_last_error(). Include after <cmocka.h>. */
#ifndef COMM_TESTS_DATA_PATTERNS_H
#define COMM_TESTS_DATA_PATTERNS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define OK(call)                                                                              \
  do {                                                                                        \
    comm_status_t status_ = (call);                                                           \
    if (status_ != COMM_OK) fail_msg("%s -> %d: %s", #call, (int)status_, comm_last_error()); \
  } while (0)

enum { kGuardBytes = 64, kGuardByte = 0xA5 };

static const comm_dtype_t kAllDtypes[] = {COMM_INT8,    COMM_UINT8,   COMM_INT16,  COMM_UINT16,  COMM_INT32,
                                          COMM_UINT32,  COMM_INT64,   COMM_UINT64, COMM_FLOAT16, COMM_BFLOAT16,
                                          COMM_FLOAT32, COMM_FLOAT64, COMM_BOOL};
enum { kDtypeCount = sizeof(kAllDtypes) / sizeof(kAllDtypes[0]) };

/* Byte i of the data that `owner` contributes in a case tagged `salt`. The
 * (i >> 9) term keeps a block shifted by a multiple of 256 bytes visible. */
static inline uint8_t pattern(int owner, size_t i, int salt) {
  return (uint8_t)(owner * 29 + salt * 101 + i * 7 + (i >> 9) * 13 + 1);
}

static inline void fill(uint8_t *p, size_t bytes, int owner, int salt) {
  for (size_t i = 0; i < bytes; ++i) p[i] = pattern(owner, i, salt);
}

static inline void expect_pattern(const uint8_t *p, size_t bytes, int owner, int salt, const char *what) {
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != pattern(owner, i, salt)) {
      fail_msg("%s: byte %zu of %zu is %u, expected %u (the data of rank %d)", what, i, bytes, p[i],
               pattern(owner, i, salt), owner);
    }
  }
}

/* `bytes` of zeroed data followed by the guard zone; never NULL. */
static inline uint8_t *guarded(size_t bytes) {
  uint8_t *p = malloc(bytes + kGuardBytes);
  assert_non_null(p);
  memset(p, 0, bytes);
  memset(p + bytes, kGuardByte, kGuardBytes);
  return p;
}

static inline void expect_guard(const uint8_t *p, size_t bytes, const char *what) {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (p[bytes + i] != kGuardByte) fail_msg("%s: byte %zu past the end was written", what, i);
  }
}

/* A tensor of `rows` rows of `row_elements` elements (1-d when that is 1). */
static inline comm_tensor_t *tensor(void *data, comm_dtype_t dtype, int64_t rows, int64_t row_elements) {
  comm_tensor_t *t = NULL;
  int64_t shape[2] = {rows, row_elements};
  OK(comm_tensor_create(&t, data, dtype, row_elements == 1 ? 1 : 2, shape));
  return t;
}

#endif
