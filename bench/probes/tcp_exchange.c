/* tcp_exchange - the ceiling for any 2-rank all_reduce over TCP on this
 * machine: two processes, pinned to CPUs 0 and 1, one loopback connection,
 * each sends MIB MiB to the other at the same time (non-blocking sockets,
 * both directions polled in one loop, as a collective library would) and
 * receives as much. A 2-rank all_reduce of S bytes must send S each way
 * (S/2 in its reduce-scatter, S/2 in its all-gather) and its busbw is S /
 * time, so it cannot beat this exchange's per-direction rate at S.
 *
 *   cmake -S . -B build -DCOMM_BUILD_PROBES=ON && cmake --build build --target comm-tcp-exchange
 *   build/bench/probes/comm-tcp-exchange 64 5
 *
 * Prints each round (after one untimed) and the median, in GB/s per
 * direction. With a third argument "splice", each side sends by
 * vmsplice into a pipe and splice from it into the socket: the kernel
 * then sends the sender's pages instead of a copy of them, one of the two
 * copies per byte gone, to see how much of the ceiling those copies are. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

/* splice mode's pipe (both ends -1 without it). */
static int pipe_ends[2] = {-1, -1};
/* splice mode: bytes of `out` handed to the pipe and not yet to the socket. */
static size_t in_pipe;

/* Sends more of `out` from `sent` (`queued` of it already in the pipe in
 * splice mode); returns the bytes that reached the socket. */
static size_t send_some(int fd, const char *out, size_t bytes, size_t sent, size_t *queued) {
  if (pipe_ends[0] < 0) {
    ssize_t n = send(fd, out + sent, bytes - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    return n > 0 ? (size_t)n : 0;
  }
  /* 64 KiB at a time, a pipe's default capacity: larger pieces were slower. */
  if (*queued < bytes) {
    struct iovec piece = {(void *)(out + *queued), bytes - *queued < 65536 ? bytes - *queued : 65536};
    ssize_t n = vmsplice(pipe_ends[1], &piece, 1, SPLICE_F_NONBLOCK);
    if (n > 0) {
      *queued += (size_t)n;
      in_pipe += (size_t)n;
    }
  }
  if (in_pipe == 0) return 0;
  ssize_t n = splice(pipe_ends[0], NULL, fd, NULL, in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
  if (n <= 0) return 0;
  in_pipe -= (size_t)n;
  return (size_t)n;
}

/* Both ways at once; returns the seconds it took. */
static double exchange(int fd, size_t bytes, const char *out, char *in) {
  size_t sent = 0, got = 0, queued = 0;
  const double start = seconds();
  while (sent < bytes || got < bytes) {
    if (got < bytes) {
      ssize_t n = recv(fd, in + got, bytes - got, MSG_DONTWAIT);
      if (n > 0) got += (size_t)n;
      if (n == 0) die("peer closed");
    }
    if (sent < bytes) sent += send_some(fd, out, bytes, sent, &queued);
  }
  return seconds() - start;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "splice") == 0)) {
    fprintf(stderr, "usage: tcp_exchange MIB ROUNDS [splice]\n");
    return 2;
  }
  const int splice_mode = argc == 4;
  const size_t bytes = (size_t)atol(argv[1]) << 20;
  const int rounds = atoi(argv[2]);
  if (bytes == 0 || rounds < 1 || rounds > 100) {
    fprintf(stderr, "tcp_exchange: MIB must be positive, ROUNDS 1..100\n");
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
    die("listen");
  }
  /* Page-aligned, so that vmsplice hands the socket whole pages. */
  char *out = aligned_alloc(4096, bytes), *in = aligned_alloc(4096, bytes);
  if (out == NULL || in == NULL) die("malloc");
  memset(out, 1, bytes); /* every page touched before timing */
  memset(in, 0, bytes);
  pid_t child = fork();
  if (child < 0) die("fork");
  int fd;
  if (child == 0) {
    pin(1);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) die("connect");
  } else {
    pin(0);
    fd = accept(listener, NULL, NULL);
    if (fd < 0) die("accept");
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (splice_mode) {
    if (pipe(pipe_ends) != 0) die("pipe");
    fcntl(pipe_ends[1], F_SETPIPE_SZ, 1 << 20);
  }
  double times[100];
  exchange(fd, bytes, out, in); /* untimed: the connection's windows grow first */
  for (int r = 0; r < rounds; ++r) {
    char token = 0; /* start together */
    if (child == 0) {
      if (write(fd, &token, 1) != 1 || read(fd, &token, 1) != 1) die("sync");
    } else if (read(fd, &token, 1) != 1 || write(fd, &token, 1) != 1) {
      die("sync");
    }
    times[r] = exchange(fd, bytes, out, in);
    if (child != 0)
      printf("round %d: %.1f ms, %.2f GB/s per direction\n", r + 1, times[r] * 1e3, bytes / times[r] / 1e9);
  }
  if (child == 0) return 0;
  waitpid(child, NULL, 0);
  qsort(times, (size_t)rounds, sizeof times[0], compare);
  double median = times[rounds / 2];
  printf("median: %zu MiB each way in %.1f ms, %.2f GB/s per direction\n", bytes >> 20, median * 1e3,
         bytes / median / 1e9);
  return 0;
}
