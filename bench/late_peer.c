/* late_peer - what a rank pays for waiting: rank 1 calls all_reduce (8 B)
 * SKEW us after rank 0, and rank 0 reports how long after rank 1's arrival
 * its own call returned (median and 90th percentile of ROUNDS calls) and
 * how much of its wait it kept a CPU busy. A library that spins returns at
 * once and burns the core; one that sleeps frees the core and wakes late.
 * The same file builds against comm or, with -DLATE_PEER_MPI, against MPI:
 *
 *   cmake --build build --target comm-late-peer
 *   build/tools/commrun/commrun -n 2 --bind-core build/bench/comm-late-peer 100 1000
 *   mpicc.openmpi -O2 -DLATE_PEER_MPI bench/late_peer.c -o build/late-peer-mpi
 *   mpirun.openmpi --allow-run-as-root -np 2 --bind-to core --mca pml ob1 \
 *       --mca btl self,vader build/late-peer-mpi 100 1000
 *
 * Arguments: skews in us (default 30 100 300 1000). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef LATE_PEER_MPI
#include <mpi.h>
#define LIBRARY "MPI"
#else
#include <comm.h>
#define LIBRARY "comm"
#endif

enum { kRounds = 300 };

static double clock_us(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int ascending(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The library behind three calls. */
#ifdef LATE_PEER_MPI
static int setup(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void all_reduce(float *in, float *out) { MPI_Allreduce(in, out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static void teardown(void) { MPI_Finalize(); }
#else
static comm_t *world;
static comm_tensor_t *in_tensor, *out_tensor;
static void check(comm_status_t status, const char *what) {
  if (status == COMM_OK) return;
  fprintf(stderr, "late_peer: %s: %s\n", what, comm_last_error());
  exit(1);
}
static int setup(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  check(comm_init(&world, NULL), "comm_init");
  int rank;
  check(comm_rank(&rank, world), "comm_rank");
  return rank;
}
static void barrier(void) { check(comm_barrier(world, NULL), "comm_barrier"); }
static void all_reduce(float *in, float *out) {
  static const int64_t one[1] = {1};
  if (in_tensor == NULL) {
    check(comm_tensor_create(&in_tensor, in, COMM_FLOAT32, 1, one), "comm_tensor_create");
    check(comm_tensor_create(&out_tensor, out, COMM_FLOAT32, 1, one), "comm_tensor_create");
  }
  check(comm_all_reduce(world, in_tensor, out_tensor, COMM_OP_SUM, NULL), "comm_all_reduce");
}
static void teardown(void) {
  comm_tensor_destroy(in_tensor);
  comm_tensor_destroy(out_tensor);
  comm_destroy(world);
}
#endif

int main(int argc, char **argv) {
  int rank = setup(&argc, &argv);
  static const double kDefaultSkews[] = {30, 100, 300, 1000};
  int skews = argc > 1 ? argc - 1 : (int)(sizeof kDefaultSkews / sizeof kDefaultSkews[0]);
  float in = 1, out = 0;
  for (int s = 0; s < skews; ++s) {
    double skew = argc > 1 ? atof(argv[1 + s]) : kDefaultSkews[s];
    double late[kRounds], cpu = 0, wall = 0;
    for (int i = 0; i < kRounds; ++i) {
      barrier();
      double start = clock_us(CLOCK_MONOTONIC), start_cpu = clock_us(CLOCK_THREAD_CPUTIME_ID);
      if (rank == 1) {
        while (clock_us(CLOCK_MONOTONIC) - start < skew) {
        }
      }
      all_reduce(&in, &out);
      double took = clock_us(CLOCK_MONOTONIC) - start;
      late[i] = took - skew;
      cpu += clock_us(CLOCK_THREAD_CPUTIME_ID) - start_cpu;
      wall += took;
    }
    qsort(late, kRounds, sizeof late[0], ascending);
    if (rank == 0) {
      printf(
          "%s, peer %6.0f us late: returned %6.1f us after it (median), %6.1f us (p90); "
          "CPU busy %3.0f%% of the wait\n",
          LIBRARY, skew, late[kRounds / 2], late[kRounds * 9 / 10], 100 * cpu / wall);
    }
  }
  teardown();
  return 0;
}
