package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Misuse gives exceptions, never a crash, and the same kind whichever side
 * sees it: IllegalArgumentException for a bad argument (Java's own checks,
 * or CommInvalidArgumentException with the C library's message), and
 * IllegalStateException (CommInvalidUsageException, INVALID_USAGE) for a
 * closed communicator or handle; failures are CommExceptions by status,
 * with subclasses for timeouts, aborts and mismatches.
 */
class ErrorsTest {
  private static Communicator world;
  private static int rank;
  private static int size;

  @BeforeAll
  static void join() {
    world = World.get();
    rank = world.rank();
    size = world.size();
  }

  private static void assertClosed(Executable call) {
    IllegalStateException error = assertThrows(IllegalStateException.class, call);
    CommInvalidUsageException usage = assertInstanceOf(CommInvalidUsageException.class, error);
    assertEquals(Status.INVALID_USAGE, usage.status());
    assertTrue(error.getMessage().contains("closed"), error.getMessage());
  }

  /** An argument only the C library can judge: an IllegalArgumentException carrying its message. */
  private static void assertRefusedByC(String call, Executable body) {
    IllegalArgumentException error = assertThrows(IllegalArgumentException.class, body);
    CommInvalidArgumentException refused = assertInstanceOf(CommInvalidArgumentException.class, error);
    assertEquals(Status.INVALID_ARGUMENT, refused.status());
    assertTrue(error.getMessage().startsWith(call + ":"), error.getMessage());
  }

  /** Device tensors: where no CUDA device is visible they are refused where they are made, naming the cause
   *  (a build without CUDA, or a machine that shows no device); where one is, an address that is no device
   *  memory is refused by the call, and there is no Java view. */
  @Test
  void deviceTensorsAreChecked() {
    String built = System.getenv("COMM_TEST_BUILT_WITH_CUDA"); // what CMake was asked to build
    if (built != null) {
      assertEquals(built.equals("1"), Cuda.isBuilt());
    }
    if (Cuda.deviceCount() == 0) {
      assertFalse(Cuda.unavailableReason().isEmpty());
      CommException e = assertThrows(CommException.class, () -> Tensor.ofDevice(4096, 0, DType.FLOAT32, 4));
      assertEquals(Status.NOT_SUPPORTED, e.status());
      String cause = Cuda.isBuilt() ? "no CUDA device visible" : "needs a build of comm with CUDA";
      assertTrue(e.getMessage().startsWith("comm_tensor_set_memory:") && e.getMessage().contains(cause),
          e.getMessage());
      assertThrows(CommException.class, () -> world.setStream(4096));
      return;
    }
    assertEquals("", Cuda.unavailableReason());
    Tensor t = Tensor.ofDevice(4096, 0, DType.FLOAT32, 4);
    assertEquals(0, t.device());
    assertThrows(IllegalStateException.class, t::buffer);
    assertThrows(IllegalStateException.class, t::toFloatArray);
    assertRefusedByC("comm_all_reduce", () -> world.allReduce(t, t, ReduceOp.SUM));
  }

  @Test
  void argumentsJavaCanCheck() {
    Tensor four = Tensor.allocate(DType.FLOAT32, 4);
    Tensor five = Tensor.allocate(DType.FLOAT32, 5);
    Tensor ints = Tensor.allocate(DType.INT32, 4);
    assertThrows(IllegalArgumentException.class, () -> world.allReduce(four, five, ReduceOp.SUM));
    assertThrows(IllegalArgumentException.class, () -> world.allReduce(four, ints, ReduceOp.SUM));
    assertThrows(IllegalArgumentException.class, () -> world.broadcast(four, size));
    assertThrows(IllegalArgumentException.class, () -> world.reduce(four, four, ReduceOp.SUM, -1));
    assertThrows(IllegalArgumentException.class, () -> world.send(four, size, 0));
    assertThrows(IllegalArgumentException.class, () -> world.recv(four, 0, -1));
    assertThrows(IllegalArgumentException.class, () -> world.allGather(four, four));
    assertThrows(IllegalArgumentException.class, () -> world.allGatherV(four, four, new long[size + 1]));
    assertThrows(IllegalArgumentException.class, () -> world.scatterV(four, four, new long[] {-1}, 0));
    assertThrows(IllegalArgumentException.class, () -> world.allToAll(new Tensor[size + 1], new Tensor[size]));
    assertThrows(IllegalArgumentException.class, () -> world.allToAllSingle(four, four, new long[1], null));
    assertThrows(IllegalArgumentException.class, () -> world.reduceScatter(new float[4 * size + 1], ReduceOp.SUM));
    assertThrows(IllegalArgumentException.class, () -> world.createGroup(new int[] {0, size}));
    assertThrows(IllegalArgumentException.class, () -> world.split(-2, 0));
    assertThrows(IllegalArgumentException.class, () -> world.setTimeout(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> new Batch().send(four, 0, -3));
    assertThrows(NullPointerException.class, () -> world.allReduce(null, four, ReduceOp.SUM));
    assertThrows(NullPointerException.class, () -> world.allReduce((int[]) null, ReduceOp.SUM));
    assertThrows(IllegalArgumentException.class, () -> world.batch(new Batch().recv(four, size)));
  }

  @Test
  void tensorsNeedDirectNativeOrderBuffersOfTheRightSize() {
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(ByteBuffer.allocate(16), DType.FLOAT32));
    ByteBuffer bigEndian = ByteBuffer.allocateDirect(16).order(ByteOrder.BIG_ENDIAN);
    if (ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN) {
      IllegalArgumentException error =
          assertThrows(IllegalArgumentException.class, () -> Tensor.of(bigEndian, DType.FLOAT32));
      assertTrue(error.getMessage().contains("nativeOrder"), error.getMessage());
    }
    Tensor.of(bigEndian, DType.UINT8); // single bytes have no order
    ByteBuffer direct = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(direct, DType.FLOAT32, 5));
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(direct, DType.FLOAT64, 1, 3));
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(direct.duplicate().position(1), DType.INT32));
    assertThrows(IllegalArgumentException.class, () -> Tensor.allocate(DType.INT8, 1, 1, 1, 1, 1, 1, 1, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> Tensor.allocate(DType.INT8, 2, -1));
    assertThrows(IllegalArgumentException.class, () -> Tensor.allocate(DType.INT64, 1L << 31));
    assertThrows(IllegalArgumentException.class, () -> Tensor.allocate(DType.INT8, 4).reshape(3));
    assertThrows(IllegalStateException.class, () -> Tensor.allocate(DType.INT8, 4).toFloatArray());
  }

  @Test
  void tensorsDescribeTheirBuffer() {
    ByteBuffer direct = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    direct.position(8);
    Tensor matrix = Tensor.of(direct, DType.FLOAT64, 2, 3);
    assertEquals(2, matrix.ndim());
    assertArrayEquals(new long[] {2, 3}, matrix.shape());
    assertEquals(6, matrix.numel());
    assertEquals(48, matrix.nbytes());
    assertEquals(2, matrix.rows());
    assertEquals(DType.FLOAT64, matrix.dtype());
    matrix.buffer().asDoubleBuffer().put(0, 4.5); // the tensor starts at the buffer's position
    assertEquals(4.5, direct.getDouble(8));
    assertEquals(7, Tensor.of(direct, DType.FLOAT64).numel()); // the remaining 56 bytes
    Tensor scalar = Tensor.allocate(DType.INT16);
    assertEquals(0, scalar.ndim());
    assertEquals(1, scalar.numel());
    assertEquals(1, scalar.rows());
    assertArrayEquals(new long[] {1, 6}, matrix.reshape(1, 6).shape());
    assertArrayEquals(new float[] {1, 2}, Tensor.copyOf(new float[] {1, 2}).toFloatArray());
    assertEquals(DType.INT8, Tensor.copyOf(new byte[] {1}).dtype());
    for (DType dtype : DType.values()) {
      assertEquals(CommNative.comm_dtype_size(dtype.code()), dtype.size(), dtype.name());
    }
  }

  @Test
  void argumentsOnlyTheCLibraryCanCheckAreIllegalArgumentsToo() {
    // A bitwise op on floats: Java does not know which op suits which dtype.
    Tensor floats = Tensor.allocate(DType.FLOAT32, 4);
    assertRefusedByC("comm_all_reduce", () -> world.allReduce(floats, floats, ReduceOp.BXOR));
    assertRefusedByC("comm_all_reduce", () -> world.allReduceAsync(floats, ReduceOp.BXOR));
    // Splits that do not add up to the rows: only C sees the sums.
    long[] splits = new long[size];
    splits[0] = size + 1;
    assertRefusedByC("comm_all_to_all_single",
        () -> world.allToAllSingle(Tensor.allocate(DType.INT8, size), Tensor.allocate(DType.INT8, size), splits,
            splits));
    world.barrier();
  }

  @Test
  void closedCommunicatorsAndHandlesThrow() {
    Communicator group = world.split(0, rank).orElseThrow();
    Handle done = group.barrierAsync();
    done.await();
    Handle unwaited = group.barrierAsync();
    group.close();
    Tensor data = Tensor.allocate(DType.INT32, 1);
    assertClosed(group::barrier);
    assertClosed(() -> group.allReduce(data, ReduceOp.SUM));
    assertClosed(() -> group.allReduceAsync(data, ReduceOp.SUM));
    assertClosed(() -> group.send(data, 0));
    assertClosed(() -> group.split(0, 0));
    assertClosed(group::rank);
    assertClosed(group::abort);
    assertClosed(group::timeout);
    assertClosed(group::failedRank);
    assertClosed(group::failedRanks);
    assertClosed(() -> group.agree(1));
    assertClosed(group::shrink);
    assertClosed(group::shrinkAsync);
    assertClosed(() -> group.grow(1));
    assertClosed(() -> group.growAsync(1));
    assertClosed(() -> group.splitAsync(0, 0));
    assertClosed(() -> group.allReduce(new float[1], ReduceOp.SUM));
    assertClosed(unwaited::await); // closing the communicator closed it
    assertTrue(done.isDone()); // it completed before: its outcome stays
    done.await();
    done.close();
    assertClosed(done::isDone);
    assertClosed(done::await);
    assertTrue(group.toString().contains("closed"));
  }

  @Test
  void aWaitThatRunsOutLeavesTheOperationRunning() {
    Tensor got = Tensor.allocate(DType.INT64, 1);
    Handle receive = world.recvAsync(got, (rank + size - 1) % size, 20);
    CommTimeoutException ranOut =
        assertThrows(CommTimeoutException.class, () -> receive.await(Duration.ofMillis(20)));
    assertEquals(Status.TIMEOUT, ranOut.status());
    assertFalse(receive.isDone());
    world.barrier(); // every rank has seen its wait run out: now send
    world.send(Tensor.copyOf(new long[] {rank + 40}), (rank + 1) % size, 20);
    receive.await();
    assertTrue(receive.isDone());
    assertEquals((rank + size - 1) % size + 40, got.toLongArray()[0]);
  }

  @Test
  void anOperationPastItsDeadlineFailsWithATimeout() {
    try (Communicator group = world.split(0, rank).orElseThrow()) {
      group.setTimeout(Duration.ofMillis(300));
      long start = System.nanoTime();
      CommTimeoutException error = assertThrows(CommTimeoutException.class,
          () -> group.recv(Tensor.allocate(DType.INT8, 1), (rank + 1) % size, 21));
      assertTrue(System.nanoTime() - start < Duration.ofSeconds(20).toNanos());
      assertFalse(error.getMessage().isEmpty());
    }
    world.barrier();
  }

  @Test
  void abortFromAnotherThreadEndsAWait() throws InterruptedException {
    try (Communicator group = world.split(0, rank).orElseThrow()) {
      Thread aborter = new Thread(() -> {
        try {
          Thread.sleep(200);
        } catch (InterruptedException stop) {
          return;
        }
        group.abort();
      });
      aborter.start();
      CommException error = assertThrows(CommException.class,
          () -> group.recv(Tensor.allocate(DType.INT8, 1), (rank + 1) % size, 22));
      assertInstanceOf(CommAbortedException.class, error, error.getMessage());
      assertThrows(CommAbortedException.class, group::barrier);
      aborter.join();
    }
    world.barrier();
  }

  @Test
  void revokeOnOneRankReachesEveryRank() {
    try (Communicator group = world.split(0, rank).orElseThrow()) {
      String expected = rank == size - 1 ? "revoked on this rank" : "revoked by rank " + (size - 1);
      if (rank == size - 1) {
        group.revoke();
      }
      CommRevokedException revoked = assertThrows(CommRevokedException.class, group::barrier);
      assertEquals(Status.REVOKED, revoked.status());
      assertTrue(revoked.getMessage().contains(expected), revoked.getMessage());
      assertThrows(CommRevokedException.class, group::barrier);  // and every later call
    }
    world.barrier();
  }

  @Test
  void agreeOnARevokedCommunicatorThrowsAndShrinkStillWorks() {
    Communicator group = world.split(0, rank, "to-revoke").orElseThrow();
    group.barrier(); // every rank has the group before any revokes it
    group.revoke();
    CommRevokedException revoked = assertThrows(CommRevokedException.class, () -> group.agree(1));
    assertEquals(Status.REVOKED, revoked.status());
    assertTrue(revoked.getMessage().contains("comm_agree"), revoked.getMessage());
    Communicator shrunk = group.shrink();
    group.close(); // the shrunk communicator is the world's, not the revoked one's
    assertFalse(shrunk.isClosed());
    try (shrunk) {
      assertEquals("to-revoke-shrunk", shrunk.name());
      assertEquals(size, shrunk.size());
      assertEquals(rank, shrunk.rank());
      long[] sum = {rank + 1};
      shrunk.allReduce(sum, ReduceOp.SUM);
      assertEquals((long) size * (size + 1) / 2, sum[0]);
      assertEquals(1, shrunk.agree(1).flags());
    }
    world.barrier();
  }

  @Test
  void growRefusesBadCounts() {
    assertRefusedByC("comm_grow", () -> world.grow(0));
    assertRefusedByC("comm_grow_async", () -> world.growAsync(65536, "too-many"));
    // Every rank learns that the counts differ, without a newcomer in sight.
    IllegalArgumentException differ =
        assertThrows(CommInvalidArgumentException.class, () -> world.grow(rank == 0 ? 2 : 1));
    assertTrue(differ.getMessage().contains("different counts"), differ.getMessage());
    world.barrier();
  }

  @Test
  void ranksThatDisagreeGetAMismatch() {
    Tensor in = Data.filled(DType.FLOAT32, rank, 0, 4);
    Tensor out = Tensor.allocate(DType.FLOAT32, 4);
    int named = 0;
    try {
      world.allReduce(in, out, rank == size - 1 ? ReduceOp.MAX : ReduceOp.SUM);
    } catch (CommMismatchException mismatch) {
      assertEquals(Status.MISMATCH, mismatch.status());
      named = 1;
    }
    int[] anyone = {named};
    world.allReduce(anyone, ReduceOp.MAX);
    assertEquals(1, anyone[0], "no rank reported the mismatch");
    int[] stillWorks = {1};
    world.allReduce(stillWorks, ReduceOp.SUM);
    assertEquals(size, stillWorks[0]);
  }

  /**
   * Rank 0 comes late to a group of every rank: the others cannot finish
   * making it before, so a second making from the world fails meanwhile, and
   * they abort theirs. Rank 0 then joins, blocking: that needs the others'
   * abandoned makings, which go on in the background.
   */
  @Test
  void abortOfAMakingThatWaitsForALateRank() throws InterruptedException {
    if (size < 2) {
      return;
    }
    int[] all = new int[size];
    for (int i = 0; i < size; ++i) {
      all[i] = i;
    }
    if (rank != 0) {
      try (Pending<Communicator> making = world.createGroupAsync(all, "late")) {
        assertFalse(making.isDone());
        CommInvalidUsageException second =
            assertThrows(CommInvalidUsageException.class, () -> world.splitAsync(0, 0));
        assertTrue(second.getMessage().contains("another communicator is being made"), second.getMessage());
        making.abort();
        CommAbortedException aborted =
            assertThrows(CommAbortedException.class, () -> making.await(Duration.ofSeconds(1)));
        assertTrue(aborted.getMessage().contains("aborted while it was being made"), aborted.getMessage());
        assertEquals(aborted, assertThrows(CommAbortedException.class, making::await)); // the same again
      }
    } else {
      Thread.sleep(300);
      world.createGroup(all, "late").close();
    }
    long[] sum = {rank};
    world.allReduce(sum, ReduceOp.SUM);
    assertEquals((long) size * (size - 1) / 2, sum[0]);
  }
}
