package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every collective, blocking and async, checked element by element against a reference. */
class CollectivesTest {
  private static Communicator world;
  private static int rank;
  private static int size;

  @BeforeAll
  static void join() {
    world = World.get();
    rank = world.rank();
    size = world.size();
  }

  /** The value row {@code row}, column {@code column} of rank {@code from}'s data holds. */
  private static long code(int from, long row, long column) {
    return from * 1000 + row * 10 + column;
  }

  /** A [rows, columns] INT64 tensor holding code(from, firstRow + row, column). */
  private static Tensor coded(int from, long firstRow, long rows, long columns) {
    Tensor tensor = Tensor.allocate(DType.INT64, rows, columns);
    for (long r = 0; r < rows; ++r) {
      for (long c = 0; c < columns; ++c) {
        Data.put(tensor, r * columns + c, code(from, firstRow + r, c));
      }
    }
    return tensor;
  }

  private static long sum(long[] counts, int end) {
    long total = 0;
    for (int r = 0; r < end; ++r) {
      total += counts[r];
    }
    return total;
  }

  /** One row per rank more than the previous one: 1, 2, 3, ... */
  private static long[] unevenCounts() {
    long[] counts = new long[size];
    for (int r = 0; r < size; ++r) {
      counts[r] = r + 1;
    }
    return counts;
  }

  @Test
  void allReduceEveryDtypeAndOp() {
    for (DType dtype : DType.values()) {
      for (ReduceOp op : ReduceOp.values()) {
        if (!Data.supports(dtype, op)) {
          continue;
        }
        Tensor in = Data.filled(dtype, rank, op.ordinal(), 5, 3);
        Tensor out = Tensor.allocate(dtype, 5, 3);
        world.allReduce(in, out, op);
        Data.assertElements(out, i -> Data.reduced(dtype, op, size, i, op.ordinal()), dtype + " " + op);
        Data.assertElements(in, i -> Data.value(dtype, rank, i, op.ordinal()), "input of " + dtype + " " + op);
      }
    }
  }

  @Test
  void allReduceInPlaceAsyncOnALargeTensor() {
    long count = (1 << 20) + 3;
    Tensor data = Data.filled(DType.FLOAT32, rank, 0, count);
    try (Handle handle = world.allReduceAsync(data, ReduceOp.SUM)) {
      handle.await(Duration.ofSeconds(60));
      assertTrue(handle.isDone());
    }
    Data.assertElements(data, i -> Data.reduced(DType.FLOAT32, ReduceOp.SUM, size, i, 0), "in place");

    Tensor in = Data.filled(DType.INT32, rank, 1, 64);
    Tensor out = Tensor.allocate(DType.INT32, 64);
    Handle handle = world.allReduceAsync(in, out, ReduceOp.MAX);
    handle.await();
    handle.await(); // again: the same outcome
    Data.assertElements(out, i -> Data.reduced(DType.INT32, ReduceOp.MAX, size, i, 1), "async max");
  }

  @Test
  void allReduceOfArrays() {
    float[] floats = {rank, 1.5f};
    world.allReduce(floats, ReduceOp.SUM);
    assertArrayEquals(new float[] {size * (size - 1) / 2f, 1.5f * size}, floats);
    double[] doubles = {rank + 0.25};
    world.allReduce(doubles, ReduceOp.MAX);
    assertArrayEquals(new double[] {size - 0.75}, doubles);
    int[] ints = {rank + 1, 7};
    world.allReduce(ints, ReduceOp.MIN);
    assertArrayEquals(new int[] {1, 7}, ints);
    long[] longs = {1L << 40, rank};
    world.allReduce(longs, ReduceOp.SUM);
    assertArrayEquals(new long[] {size * (1L << 40), size * (size - 1L) / 2}, longs);
    byte[] bytes = {(byte) (1 << rank % 8)};
    world.allReduce(bytes, ReduceOp.BOR);
    byte expected = 0;
    for (int r = 0; r < size; ++r) {
      expected |= (byte) (1 << r % 8);
    }
    assertArrayEquals(new byte[] {expected}, bytes);
  }

  @Test
  void reduceToEveryRoot() {
    for (int root = 0; root < size; ++root) {
      Tensor in = Data.filled(DType.FLOAT64, rank, root, 4, 2);
      Tensor out = rank == root ? Tensor.allocate(DType.FLOAT64, 4, 2) : null;
      if (root % 2 == 0) {
        world.reduce(in, out, ReduceOp.PROD, root);
      } else {
        world.reduceAsync(in, out, ReduceOp.PROD, root).await();
      }
      if (rank == root) {
        int salt = root;
        Data.assertElements(out, i -> Data.reduced(DType.FLOAT64, ReduceOp.PROD, size, i, salt), "root " + root);
      }
    }
    int[] values = {rank, 1};
    world.reduce(values, ReduceOp.SUM, size - 1);
    assertArrayEquals(rank == size - 1 ? new int[] {size * (size - 1) / 2, size} : new int[] {rank, 1}, values);
  }

  @Test
  void broadcastFromEveryRoot() {
    for (int root = 0; root < size; ++root) {
      Tensor in = rank == root ? coded(root, 0, 3, 2) : null;
      Tensor out = Tensor.allocate(DType.INT64, 3, 2);
      world.broadcast(in, out, root);
      int from = root;
      Data.assertElements(out, i -> code(from, i / 2, i % 2), "broadcast from " + root);

      Tensor data = rank == root ? coded(root, 0, 5, 1) : Tensor.allocate(DType.INT64, 5, 1);
      world.broadcastAsync(data, root).await();
      Data.assertElements(data, i -> code(from, i, 0), "in-place broadcast from " + root);
    }
    double[] doubles = rank == 0 ? new double[] {2.5, -1} : new double[2];
    world.broadcast(doubles, 0);
    assertArrayEquals(new double[] {2.5, -1}, doubles);
    byte[] bytes = rank == size - 1 ? new byte[] {9, 8, 7} : new byte[3];
    world.broadcast(bytes, size - 1);
    assertArrayEquals(new byte[] {9, 8, 7}, bytes);
  }

  @Test
  void allGatherRowsInRankOrder() {
    Tensor in = coded(rank, 0, 2, 3);
    Tensor out = Tensor.allocate(DType.INT64, 2L * size, 3);
    world.allGather(in, out);
    Data.assertElements(out, i -> code((int) (i / 6), i / 3 % 2, i % 3), "allGather");

    Tensor async = Tensor.allocate(DType.INT64, 2L * size, 3);
    world.allGatherAsync(in, async).await();
    Data.assertElements(async, i -> code((int) (i / 6), i / 3 % 2, i % 3), "allGatherAsync");

    long[] gathered = world.allGather(new long[] {rank, -rank});
    for (int r = 0; r < size; ++r) {
      assertEquals(r, gathered[2 * r]);
      assertEquals(-r, gathered[2 * r + 1]);
    }
  }

  @Test
  void allGatherVUnevenRows() {
    long[] counts = unevenCounts();
    Tensor in = coded(rank, 0, counts[rank], 2);
    Tensor out = Tensor.allocate(DType.INT64, sum(counts, size), 2);
    world.allGatherV(in, out, counts);
    Tensor async = Tensor.allocate(DType.INT64, sum(counts, size), 2);
    world.allGatherVAsync(in, async, counts).await();
    for (Tensor result : new Tensor[] {out, async}) {
      for (int from = 0; from < size; ++from) {
        for (long row = 0; row < counts[from]; ++row) {
          long at = (sum(counts, from) + row) * 2;
          assertEquals(code(from, row, 0), Data.get(result, at));
          assertEquals(code(from, row, 1), Data.get(result, at + 1));
        }
      }
    }
  }

  @Test
  void reduceScatterEqualBlocks() {
    Tensor in = Data.filled(DType.INT32, rank, 2, 3L * size, 2);
    Tensor out = Tensor.allocate(DType.INT32, 3, 2);
    world.reduceScatter(in, out, ReduceOp.SUM);
    Data.assertElements(out, i -> Data.reduced(DType.INT32, ReduceOp.SUM, size, rank * 6L + i, 2), "reduceScatter");

    Tensor async = Tensor.allocate(DType.INT32, 3, 2);
    world.reduceScatterAsync(in, async, ReduceOp.MAX).await();
    Data.assertElements(async, i -> Data.reduced(DType.INT32, ReduceOp.MAX, size, rank * 6L + i, 2), "async");

    float[] floats = new float[2 * size];
    for (int i = 0; i < floats.length; ++i) {
      floats[i] = i + rank;
    }
    float[] mine = world.reduceScatter(floats, ReduceOp.SUM);
    assertEquals(2, mine.length);
    for (int i = 0; i < 2; ++i) {
      assertEquals(size * (2 * rank + i) + size * (size - 1) / 2f, mine[i]);
    }
  }

  @Test
  void reduceScatterVUnevenBlocks() {
    long[] counts = unevenCounts();
    long total = sum(counts, size);
    Tensor in = Data.filled(DType.UINT16, rank, 3, total, 2);
    Tensor out = Tensor.allocate(DType.UINT16, counts[rank], 2);
    world.reduceScatterV(in, out, counts, ReduceOp.SUM);
    long first = sum(counts, rank) * 2;
    Data.assertElements(out, i -> Data.reduced(DType.UINT16, ReduceOp.SUM, size, first + i, 3), "reduceScatterV");

    Tensor async = Tensor.allocate(DType.UINT16, counts[rank], 2);
    world.reduceScatterVAsync(in, async, counts, ReduceOp.MIN).await();
    Data.assertElements(async, i -> Data.reduced(DType.UINT16, ReduceOp.MIN, size, first + i, 3), "async");
  }

  @Test
  void gatherToEveryRoot() {
    for (int root = 0; root < size; ++root) {
      Tensor in = coded(rank, 0, 2, 2);
      Tensor out = rank == root ? Tensor.allocate(DType.INT64, 2L * size, 2) : null;
      if (root % 2 == 0) {
        world.gather(in, out, root);
      } else {
        world.gatherAsync(in, out, root).await();
      }
      if (rank == root) {
        Data.assertElements(out, i -> code((int) (i / 4), i / 2 % 2, i % 2), "gather to " + root);
      }
    }
  }

  @Test
  void gatherVUnevenRows() {
    long[] counts = unevenCounts();
    int root = size - 1;
    Tensor in = coded(rank, 0, counts[rank], 1);
    Tensor out = rank == root ? Tensor.allocate(DType.INT64, sum(counts, size), 1) : null;
    world.gatherV(in, out, counts, root);
    Tensor async = rank == root ? Tensor.allocate(DType.INT64, sum(counts, size), 1) : null;
    world.gatherVAsync(in, async, counts, root).await();
    if (rank == root) {
      for (Tensor result : new Tensor[] {out, async}) {
        for (int from = 0; from < size; ++from) {
          for (long row = 0; row < counts[from]; ++row) {
            assertEquals(code(from, row, 0), Data.get(result, sum(counts, from) + row));
          }
        }
      }
    }
  }

  @Test
  void scatterFromEveryRoot() {
    for (int root = 0; root < size; ++root) {
      Tensor in = rank == root ? coded(root, 0, 2L * size, 3) : null;
      Tensor out = Tensor.allocate(DType.INT64, 2, 3);
      if (root % 2 == 0) {
        world.scatter(in, out, root);
      } else {
        world.scatterAsync(in, out, root).await();
      }
      int from = root;
      Data.assertElements(out, i -> code(from, 2L * rank + i / 3, i % 3), "scatter from " + root);
    }
  }

  @Test
  void scatterVUnevenRows() {
    long[] counts = unevenCounts();
    int root = 0;
    Tensor in = rank == root ? coded(root, 0, sum(counts, size), 2) : null;
    Tensor out = Tensor.allocate(DType.INT64, counts[rank], 2);
    world.scatterV(in, out, counts, root);
    Tensor async = Tensor.allocate(DType.INT64, counts[rank], 2);
    world.scatterVAsync(in, async, counts, root).await();
    long first = sum(counts, rank);
    for (Tensor result : new Tensor[] {out, async}) {
      Data.assertElements(result, i -> code(root, first + i / 2, i % 2), "scatterV");
    }
  }

  @Test
  void allToAllSingleEvenAndUneven() {
    // Even: row block p of rank r goes to rank p.
    Tensor in = coded(rank, 0, 2L * size, 1);
    Tensor out = Tensor.allocate(DType.INT64, 2L * size, 1);
    world.allToAllSingle(in, out);
    Data.assertElements(out, i -> code((int) (i / 2), 2L * rank + i % 2, 0), "even");

    // Uneven: rank r sends p + 1 rows to rank p, so it receives rank + 1 rows from each.
    long[] inSplits = unevenCounts();
    long[] outSplits = new long[size];
    java.util.Arrays.fill(outSplits, rank + 1);
    Tensor unevenIn = coded(rank, 0, sum(inSplits, size), 1);
    Tensor unevenOut = Tensor.allocate(DType.INT64, (rank + 1L) * size, 1);
    world.allToAllSingleAsync(unevenIn, unevenOut, outSplits, inSplits).await();
    long mine = sum(inSplits, rank);
    Data.assertElements(unevenOut, i -> code((int) (i / (rank + 1)), mine + i % (rank + 1), 0), "uneven");
  }

  @Test
  void allToAllOfTensorsOfAnyShape() {
    Tensor[] ins = new Tensor[size];
    Tensor[] outs = new Tensor[size];
    for (int peer = 0; peer < size; ++peer) {
      ins[peer] = coded(rank, peer * 100L, peer + 1L, 1); // peer + 1 rows for peer
      outs[peer] = Tensor.allocate(DType.INT64, rank + 1L);
    }
    world.allToAll(ins, outs);
    for (int peer = 0; peer < size; ++peer) {
      int from = peer;
      Data.assertElements(outs[peer], i -> code(from, rank * 100L + i, 0), "from " + peer);
    }
    Tensor[] again = new Tensor[size];
    for (int peer = 0; peer < size; ++peer) {
      again[peer] = Tensor.allocate(DType.INT64, rank + 1L, 1);
    }
    world.allToAllAsync(ins, again).await();
    for (int peer = 0; peer < size; ++peer) {
      int from = peer;
      Data.assertElements(again[peer], i -> code(from, rank * 100L + i, 0), "async from " + peer);
    }
  }

  @Test
  void barrierBlockingAndAsync() {
    world.barrier();
    Handle handle = world.barrierAsync();
    handle.await(Duration.ofSeconds(30));
    assertTrue(handle.isDone());
    handle.close();
    handle.close();
  }
}
