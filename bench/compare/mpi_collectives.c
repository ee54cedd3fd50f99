/* mpi_collectives.c - the MPI side of bench/compare: one collective over a
 * list of sizes, measured the way comm-bench measures (bench_common.h).
 * Built once per MPI (mpicc.openmpi, mpicc.mpich) by compare.sh.
 *   mpirun -np 2 mpi_collectives all_reduce 8,64K,1M,4M,16M,64M
 * Calls are the MPI counterparts of comm's: MPI_Allreduce, MPI_Reduce,
 * MPI_Bcast, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Gather,
 * MPI_Scatter, MPI_Alltoall, MPI_Barrier; float32 (MPI_FLOAT), MPI_SUM,
 * root 0, out of place (MPI_Bcast is in place by nature). */
#include <mpi.h>

#include "bench_common.h"

static void run_once(bench_collective c, const float *send, float *recv, int count) {
  MPI_Comm world = MPI_COMM_WORLD;
  switch (c) {
    case BENCH_ALL_REDUCE: MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, world); break;
    case BENCH_REDUCE: MPI_Reduce(send, recv, count, MPI_FLOAT, MPI_SUM, 0, world); break;
    case BENCH_BROADCAST: MPI_Bcast(recv, count, MPI_FLOAT, 0, world); break;
    case BENCH_ALL_GATHER: MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, world); break;
    case BENCH_REDUCE_SCATTER: MPI_Reduce_scatter_block(send, recv, count, MPI_FLOAT, MPI_SUM, world); break;
    case BENCH_GATHER: MPI_Gather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, 0, world); break;
    case BENCH_SCATTER: MPI_Scatter(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, 0, world); break;
    case BENCH_ALL_TO_ALL: MPI_Alltoall(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, world); break;
    case BENCH_BARRIER: MPI_Barrier(world); break;
    case BENCH_UNKNOWN: break;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  size_t sizes[BENCH_MAX_SIZES];
  bench_collective c = argc == 3 ? bench_collective_from_name(argv[1]) : BENCH_UNKNOWN;
  int nsizes = argc == 3 ? bench_parse_sizes(argv[2], sizes, BENCH_MAX_SIZES) : -1;
  if (c == BENCH_UNKNOWN || nsizes <= 0) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np N %s COLLECTIVE SIZES (e.g. all_reduce 8,64K,1M)\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (c == BENCH_BARRIER) nsizes = 1, sizes[0] = 0;
  size_t largest = 0;
  for (int s = 0; s < nsizes; ++s) largest = sizes[s] > largest ? sizes[s] : largest;
  float *send = bench_buffer(largest, 1.0f), *recv = bench_buffer(largest, 0.0f);
  double *times = malloc(1000 * sizeof *times);
  if (send == NULL || recv == NULL || times == NULL) {
    fprintf(stderr, "mpi_collectives: out of memory for %zu-byte buffers\n", largest);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int s = 0; s < nsizes; ++s) {
    int count = (int)bench_count(c, sizes[s], ranks);
    int iterations = bench_iterations(sizes[s]);
    for (int i = 0; i < BENCH_WARMUP; ++i) run_once(c, send, recv, count);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iterations; ++i) {
      double start = bench_now_us();
      run_once(c, send, recv, count);
      times[i] = bench_now_us() - start;
    }
    double mine = bench_median(times, iterations), slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) bench_print_result(c, sizes[s], slowest, iterations);
  }
  free(times);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
