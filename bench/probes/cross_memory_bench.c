// comm-cross-memory-bench: how fast this machine copies a buffer out of
// another process by Cross-Memory Attach (process_vm_readv), by piece size,
// beside memcpy of the same buffer: the measurement behind the direct
// shared-memory path streaming large messages rather than reading them
// (docs/dev/performance-history.md). Best of 7 passes per piece size.
//   cmake -S . -B build -DCOMM_BUILD_PROBES=ON && cmake --build build --target comm-cross-memory-bench
//   build/bench/probes/comm-cross-memory-bench [MiB, default 32]
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  size_t total = (size_t)(argc > 1 ? atol(argv[1]) : 32) << 20;
  char* source = malloc(total);
  char* target = malloc(total);
  if (total == 0 || source == NULL || target == NULL) {
    fprintf(stderr, "usage: %s [MiB > 0]\n", argv[0]);
    return 2;
  }
  memset(source, 1, total);  // touched before the fork: the child holds the same pages
  memset(target, 2, total);
  pid_t child = fork();
  if (child == 0) {
    pause();
    return 0;
  }
  const size_t pieces[] = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 32 << 20};
  for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; ++p) {
    if (p > 0 && pieces[p - 1] >= total) break;  // the whole buffer in one piece was the last
    size_t piece = pieces[p] < total ? pieces[p] : total;
    double best = 1e30;
    for (int pass = 0; pass < 7; ++pass) {
      double start = seconds();
      for (size_t offset = 0; offset < total; offset += piece) {
        size_t bytes = total - offset < piece ? total - offset : piece;
        struct iovec local = {target + offset, bytes};
        struct iovec remote = {source + offset, bytes};
        if (process_vm_readv(child, &local, 1, &remote, 1, 0) != (ssize_t)bytes) {
          perror("process_vm_readv");
          kill(child, SIGKILL);
          return 1;
        }
      }
      double elapsed = seconds() - start;
      if (elapsed < best) best = elapsed;
    }
    printf("process_vm_readv in %6zu KiB pieces: %6.2f GB/s\n", piece >> 10, (double)total / best / 1e9);
  }
  double best = 1e30;
  for (int pass = 0; pass < 7; ++pass) {
    double start = seconds();
    memcpy(target, source, total);
    double elapsed = seconds() - start;
    if (elapsed < best) best = elapsed;
  }
  printf("memcpy:                               %6.2f GB/s\n", (double)total / best / 1e9);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return 0;
}
