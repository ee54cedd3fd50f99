package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The world's queries, split, createGroup, shrink, grow, rank translation and closing order. */
class GroupsTest {
  private static Communicator world;
  private static int rank;
  private static int size;

  @BeforeAll
  static void join() {
    world = World.get();
    rank = world.rank();
    size = world.size();
  }

  @Test
  void worldQueries() {
    assertEquals(Integer.parseInt(System.getenv("COMM_RANK")), rank);
    assertEquals(Integer.parseInt(System.getenv("COMM_WORLD_SIZE")), size);
    assertEquals(rank, world.localRank()); // commrun starts every rank on this node
    assertEquals(size, world.localSize());
    assertEquals("world", world.name());
    assertEquals(rank, world.toWorldRank(rank));
    assertEquals(size - 1, world.fromWorldRank(size - 1));
    assertTrue(Communicator.version().matches("\\d+\\.\\d+\\.\\d+"), Communicator.version());
    assertEquals(-1, Communicator.UNDEFINED);
    assertEquals(Integer.MAX_VALUE, Communicator.TAG_MAX);
    assertTrue(world.toString().contains("world"));
  }

  @Test
  void failedRanksAgreeAndShrinkWithNoFailure() {
    assertEquals(-1, world.failedRank());
    assertArrayEquals(new int[0], world.failedRanks());
    int expected = 0xFF;
    for (int r = 0; r < size; ++r) {
      expected &= ~(1 << r);
    }
    Agreement agreement = world.agree(~(1 << rank) & 0xFF);
    assertEquals(expected, agreement.flags());
    assertArrayEquals(new int[0], agreement.failedRanks());
    assertEquals(0xFFFFFFFF, world.agree(0xFFFFFFFF).flags()); // all 32 bits travel
    try (Communicator shrunk = world.shrink("shrunk")) {
      assertEquals(size, shrunk.size());
      assertEquals(rank, shrunk.rank());
      assertEquals("shrunk", shrunk.name());
      for (int r = 0; r < size; ++r) {
        assertEquals(r, shrunk.toWorldRank(r));
      }
      long[] sum = {rank + 1};
      shrunk.allReduce(sum, ReduceOp.SUM);
      assertEquals((long) size * (size + 1) / 2, sum[0]);
      assertArrayEquals(new int[0], shrunk.failedRanks());
      assertEquals(new Agreement(expected, new int[0]), shrunk.agree(~(1 << rank) & 0xFF));
    }
    world.barrier();
  }

  @Test
  void splitByParityOrderedByKey() {
    // Key -rank: the group orders its ranks backwards.
    try (Communicator half = world.split(rank % 2, -rank, "parity").orElseThrow()) {
      int members = (size - rank % 2 + 1) / 2;
      assertEquals(members, half.size());
      assertEquals(members - 1 - rank / 2, half.rank());
      assertEquals(rank, half.toWorldRank(half.rank()));
      assertEquals(-1, half.fromWorldRank(rank % 2 == 0 ? 1 : 0));
      assertEquals("parity", half.name());

      long[] sum = {rank};
      half.allReduce(sum, ReduceOp.SUM);
      long expected = 0;
      for (int r = rank % 2; r < size; r += 2) {
        expected += r;
      }
      assertEquals(expected, sum[0]);
    }
    world.barrier();
  }

  @Test
  void splitWithUndefinedJoinsNothing() {
    Optional<Communicator> rest = world.split(rank == 0 ? Communicator.UNDEFINED : 0, 0);
    assertEquals(rank != 0, rest.isPresent());
    rest.ifPresent(group -> {
      try (group) {
        assertEquals(size - 1, group.size());
        assertEquals(rank - 1, group.rank());
        int[] ranks = {group.rank()};
        group.broadcast(ranks, group.size() - 1);
        assertArrayEquals(new int[] {size - 2}, ranks);
      }
    });
    world.barrier();
  }

  @Test
  void createGroupWithoutWorldRankZero() {
    int[] members = new int[size - 1];
    for (int i = 0; i < members.length; ++i) {
      members[i] = size - 1 - i; // reversed: group rank i is world rank size-1-i
    }
    if (rank != 0) {
      try (Communicator group = world.createGroup(members, "no-zero")) {
        assertEquals(size - 1, group.size());
        assertEquals(size - 1 - rank, group.rank());
        assertEquals(size - 1, group.toWorldRank(0));
        assertEquals(-1, group.fromWorldRank(0));
        assertEquals("no-zero", group.name());
        double[] value = {rank};
        group.allReduce(value, ReduceOp.MAX);
        assertArrayEquals(new double[] {size - 1}, value);
      }
    }
    world.barrier();
  }

  @Test
  void closingAParentClosesItsGroupsAndHandles() {
    Communicator parent = world.split(0, rank).orElseThrow();
    Communicator child = parent.split(0, rank).orElseThrow();
    Handle pending = child.barrierAsync();
    pending.await();
    parent.close();
    assertTrue(parent.isClosed());
    assertTrue(child.isClosed());
    child.close(); // idempotent
    parent.close();
    world.barrier();
  }

  @Test
  void timeoutsPerCommunicator() {
    try (Communicator group = world.split(0, rank).orElseThrow()) {
      group.setTimeout(Duration.ofMillis(12_345));
      assertEquals(Duration.ofMillis(12_345), group.timeout());
      assertFalse(world.timeout().isZero());
    }
  }

  /** The all_reduce over {@code comm} of its members' world ranks. */
  private static long sumOfWorldRanks(Communicator comm) {
    long[] sum = {rank};
    comm.allReduce(sum, ReduceOp.SUM);
    return sum[0];
  }

  @Test
  void splitGroupAndShrinkMadeWithoutBlocking() {
    Pending<Optional<Communicator>> splitting = world.splitAsync(rank % 2, rank, "half-async");
    for (int i = 0; i < 3; ++i) { // collectives on the parent go on meanwhile
      assertEquals((long) size * (size - 1) / 2, sumOfWorldRanks(world));
    }
    Communicator half = splitting.await().orElseThrow();
    assertTrue(splitting.isDone());
    assertEquals(half, splitting.await().orElseThrow()); // the same one again
    long expected = 0;
    for (int r = rank % 2; r < size; r += 2) {
      expected += r;
    }
    assertEquals("half-async", half.name());
    assertEquals(rank / 2, half.rank());
    assertEquals(expected, sumOfWorldRanks(half));

    int[] reversed = new int[size];
    for (int i = 0; i < size; ++i) {
      reversed[i] = size - 1 - i;
    }
    Pending<Communicator> grouping = world.createGroupAsync(reversed);
    while (!grouping.isDone()) {
      Thread.onSpinWait();
    }
    try (Communicator group = grouping.await()) {
      assertEquals(size - 1 - rank, group.rank());
      assertEquals((long) size * (size - 1) / 2, sumOfWorldRanks(group));
    }

    Pending<Communicator> shrinking = half.shrinkAsync("half-shrunk");
    Communicator shrunk = shrinking.await(Duration.ofMinutes(1));
    half.close(); // the shrunk communicator is the world's, not half's
    shrinking.close(); // closing a completed making leaves its communicator
    try (shrunk) {
      assertFalse(shrunk.isClosed());
      assertEquals("half-shrunk", shrunk.name());
      assertEquals(expected, sumOfWorldRanks(shrunk));
    }

    Pending<Optional<Communicator>> undefined = world.splitAsync(rank == 0 ? 0 : Communicator.UNDEFINED, 0);
    Optional<Communicator> alone = undefined.await();
    assertEquals(rank == 0, alone.isPresent());
    alone.ifPresent(Communicator::close);
    world.barrier();
  }

  /**
   * On rank 0, a JVM that joins the job as a newcomer (GrowNewcomer) with
   * launch slot {@code slot}, which no rank of the job has; null elsewhere.
   * It joins through COMM_JOIN=1, or {@code bySetting} through init's
   * setting "join".
   */
  private static Process startNewcomer(int slot, boolean bySetting) throws IOException {
    if (rank != 0) {
      return null;
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = jarOf(Communicator.class) + File.pathSeparator + jarOf(GrowNewcomer.class);
    ProcessBuilder builder = new ProcessBuilder(java, "-cp", classPath, GrowNewcomer.class.getName(),
        bySetting ? "setting" : "environment").inheritIO();
    builder.environment().put("COMM_LAUNCH_SLOT", Integer.toString(slot));
    if (bySetting) {
      builder.environment().remove("COMM_JOIN");
    } else {
      builder.environment().put("COMM_JOIN", "1");
    }
    return builder.start();
  }

  private static String jarOf(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException notAPath) {
      throw new IllegalStateException(notAPath);
    }
  }

  /** The newcomer (null: none here) exited 0; one still running at a failure is killed. */
  private static void newcomerSucceeded(Process newcomer, boolean testPassed) throws InterruptedException {
    if (newcomer == null) {
      return;
    }
    if (!testPassed) {
      newcomer.destroyForcibly();
      return;
    }
    assertTrue(newcomer.waitFor(30, TimeUnit.SECONDS), "the newcomer did not exit");
    assertEquals(0, newcomer.exitValue(), "the newcomer's exit status");
  }

  @Test
  void worldGrowsByANewcomer() throws IOException, InterruptedException {
    Process newcomer = startNewcomer(1000, false);
    boolean passed = false;
    try {
      try (Communicator grown = world.grow(1, "grown")) {
        assertEquals(size + 1, grown.size());
        assertEquals(rank, grown.rank()); // old ranks keep theirs
        assertEquals("grown", grown.name());
        assertEquals(List.of(), GrowNewcomer.check(grown, size));
      }
      passed = true;
    } finally {
      newcomerSucceeded(newcomer, passed);
    }
    assertEquals((long) size * (size - 1) / 2, sumOfWorldRanks(world)); // the world goes on
  }

  @Test
  void worldGrowsWithoutBlocking() throws IOException, InterruptedException {
    Pending<Communicator> growing = world.growAsync(1);
    assertEquals((long) size * (size - 1) / 2, sumOfWorldRanks(world)); // the world works while it grows
    Process newcomer = startNewcomer(1001, true); // after the grow began
    boolean passed = false;
    try {
      Communicator grown = growing.await(Duration.ofMinutes(1));
      assertTrue(growing.isDone());
      growing.close(); // closing a completed making leaves its communicator
      try (grown) {
        assertFalse(grown.isClosed());
        assertEquals("world-grown", grown.name());
        assertEquals(rank, grown.rank());
        assertEquals(List.of(), GrowNewcomer.check(grown, size));
      }
      passed = true;
    } finally {
      newcomerSucceeded(newcomer, passed);
    }
  }
}
