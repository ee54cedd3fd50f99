/* The CUDA tests need a GPU: without one they exit with COMM_TEST_SKIP, which
 * CTest counts as skipped (SKIP_RETURN_CODE), never as passed, after saying
 * why. */
#ifndef COMM_TESTS_CUDA_SKIP_H
#define COMM_TESTS_CUDA_SKIP_H

#include <stdio.h>

#include "comm.h"

#define COMM_TEST_SKIP 77

/* The number of CUDA devices; 0 after printing why the test skips. */
static int cuda_devices_or_skip_reason(const char *test) {
  int cuda = 0, devices = 0;
  const char *reason = "";
  comm_has_feature(&cuda, COMM_FEATURE_CUDA);
  if (!cuda) {
    printf("%s: SKIPPED: this build of comm has no CUDA\n", test);
    return 0;
  }
  comm_cuda_device_count(&devices, &reason);
  if (devices == 0) printf("%s: SKIPPED: no CUDA device visible: %s\n", test, reason);
  return devices;
}

#endif
