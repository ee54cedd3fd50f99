package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Nodes: how many, which one, and a communicator per node. Under
 * COMM_TEST_RANKS_PER_NODE=L (java.nodes.n4) ranks 0..L-1 count as node 0,
 * the next L as node 1, and so on; otherwise every rank is on this host.
 */
class NodesTest {
  private static Communicator world;
  private static int rank;
  private static int size;
  private static int perNode;

  @BeforeAll
  static void join() {
    world = World.get();
    rank = world.rank();
    size = world.size();
    String faked = System.getenv("COMM_TEST_RANKS_PER_NODE");
    perNode = faked == null || Integer.parseInt(faked) == 0 ? size : Integer.parseInt(faked);
  }

  @Test
  void nodeCountAndId() {
    assertEquals((size + perNode - 1) / perNode, world.nodeCount());
    assertEquals(rank / perNode, world.nodeId());
  }

  @Test
  void splitByNodeHoldsThisNode() {
    int first = rank / perNode * perNode;
    int members = Math.min(first + perNode, size) - first;
    try (Communicator node = world.splitByNode("node")) {
      assertEquals(members, node.size());
      assertEquals(rank - first, node.rank());
      assertEquals(first, node.toWorldRank(0));
      assertEquals(1, node.nodeCount());
      assertEquals(0, node.nodeId());
      long[] sum = {rank};
      node.allReduce(sum, ReduceOp.SUM);
      long expected = 0;
      for (int r = first; r < first + members; ++r) {
        expected += r;
      }
      assertEquals(expected, sum[0]);
    }
    world.barrier();
  }
}
