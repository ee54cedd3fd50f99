package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** send, recv, their async forms, tags and batches, checked by value. */
class PointToPointTest {
  private static Communicator world;
  private static int rank;
  private static int size;
  private static int right;
  private static int left;

  @BeforeAll
  static void join() {
    world = World.get();
    rank = world.rank();
    size = world.size();
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
  }

  private static Tensor doubles(double... values) {
    return Tensor.copyOf(values);
  }

  @Test
  void blockingRingInBothOrders() {
    // Even ranks send first, odd ones receive first: no rank waits on a rank that waits on it.
    Tensor mine = doubles(rank, rank + 0.5);
    Tensor got = Tensor.allocate(DType.FLOAT64, 2);
    if (rank % 2 == 0) {
      world.send(mine, right, 3);
      world.recv(got, left, 3);
    } else {
      world.recv(got, left, 3);
      world.send(mine, right, 3);
    }
    assertArrayEquals(new double[] {left, left + 0.5}, got.toDoubleArray());
  }

  @Test
  void asyncReceivesMatchByTagWhateverTheOrder() {
    Tensor first = Tensor.allocate(DType.INT32, 4);
    Tensor second = Tensor.allocate(DType.INT32, 4);
    Handle secondArrives = world.recvAsync(second, left, 2);
    Handle firstArrives = world.recvAsync(first, left, 1);
    Handle sendOne = world.sendAsync(Tensor.copyOf(new int[] {rank, 1, 1, 1}), right, 1);
    Handle sendTwo = world.sendAsync(Tensor.copyOf(new int[] {rank, 2, 2, 2}), right, 2);
    for (Handle handle : new Handle[] {firstArrives, secondArrives, sendOne, sendTwo}) {
      handle.await(Duration.ofSeconds(30));
    }
    assertArrayEquals(new int[] {left, 1, 1, 1}, first.toIntArray());
    assertArrayEquals(new int[] {left, 2, 2, 2}, second.toIntArray());
  }

  @Test
  void sameTagMessagesArriveInOrder() {
    int messages = 8;
    Tensor[] received = new Tensor[messages];
    Handle[] receives = new Handle[messages];
    for (int m = 0; m < messages; ++m) {
      received[m] = Tensor.allocate(DType.INT64, 1);
      receives[m] = world.recvAsync(received[m], left, 5);
    }
    for (int m = 0; m < messages; ++m) {
      world.sendAsync(Tensor.copyOf(new long[] {rank * 100L + m}), right, 5).await();
    }
    for (int m = 0; m < messages; ++m) {
      receives[m].await();
      assertEquals(left * 100L + m, received[m].toLongArray()[0]);
    }
  }

  @Test
  void isDoneTurnsTrue() throws InterruptedException {
    Tensor got = Tensor.allocate(DType.UINT8, 3);
    Handle receive = world.recvAsync(got, left, 6);
    world.barrier();
    world.send(Tensor.copyOf(new byte[] {1, 2, (byte) rank}), right, 6);
    long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
    while (!receive.isDone()) {
      assertTrue(System.nanoTime() < deadline, "the receive did not complete in 300 s");
      Thread.sleep(1);
    }
    assertTrue(receive.isDone());
    assertArrayEquals(new byte[] {1, 2, (byte) left}, got.toByteArray());
  }

  @Test
  void arraysTravelInBothDirections() {
    int[] ints = new int[3];
    float[] floats = new float[2];
    long[] longs = new long[1];
    double[] doubles = new double[1];
    byte[] bytes = new byte[2];
    Handle[] pending = {
        world.sendAsync(Tensor.copyOf(new int[] {rank, rank, rank}), right, 10),
        world.sendAsync(Tensor.copyOf(new float[] {rank, -rank}), right, 11)};
    world.recv(ints, left, 10);
    world.recv(floats, left, 11);
    for (Handle handle : pending) {
      handle.await();
    }
    // The array overloads of send block, so alternate by parity.
    if (rank % 2 == 0) {
      world.send(new long[] {rank}, right, 12);
      world.send(new double[] {rank / 2.0}, right, 13);
      world.send(new byte[] {(byte) rank, 9}, right, 14);
    }
    world.recv(longs, left, 12);
    world.recv(doubles, left, 13);
    world.recv(bytes, left, 14);
    if (rank % 2 == 1) {
      world.send(new long[] {rank}, right, 12);
      world.send(new double[] {rank / 2.0}, right, 13);
      world.send(new byte[] {(byte) rank, 9}, right, 14);
    }
    assertArrayEquals(new int[] {left, left, left}, ints);
    assertArrayEquals(new float[] {left, -left}, floats);
    assertArrayEquals(new long[] {left}, longs);
    assertArrayEquals(new double[] {left / 2.0}, doubles);
    assertArrayEquals(new byte[] {(byte) left, 9}, bytes);
  }

  @Test
  void batchesExchangeWithEveryPeer() {
    Tensor[] received = new Tensor[size];
    Batch batch = new Batch();
    // Receives first and sends last: a batch completes whatever the order.
    for (int peer = size - 1; peer >= 0; --peer) {
      received[peer] = Tensor.allocate(DType.INT32, 2);
      batch.recv(received[peer], peer, 7);
    }
    for (int peer = 0; peer < size; ++peer) {
      batch.send(Tensor.copyOf(new int[] {rank, peer}), peer, 7);
    }
    assertEquals(2 * size, batch.size());
    world.batch(batch);
    for (int peer = 0; peer < size; ++peer) {
      assertArrayEquals(new int[] {peer, rank}, received[peer].toIntArray());
    }

    Tensor fromLeft = Tensor.allocate(DType.FLOAT32, 2);
    Tensor fromRight = Tensor.allocate(DType.FLOAT32, 2);
    Batch ring = new Batch()
        .send(Tensor.copyOf(new float[] {rank, 1}), right)
        .send(Tensor.copyOf(new float[] {rank, -1}), left)
        .recv(fromLeft, left)
        .recv(fromRight, right);
    // With 2 ranks left == right: both messages come from one peer and match in order.
    world.batchAsync(ring).await();
    assertArrayEquals(new float[] {left, 1}, fromLeft.toFloatArray());
    assertArrayEquals(new float[] {right, -1}, fromRight.toFloatArray());
  }
}
