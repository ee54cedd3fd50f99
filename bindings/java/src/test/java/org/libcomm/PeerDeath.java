package org.libcomm;

/**
 * The last rank dies (Runtime.halt) while the others wait on it: each
 * survivor gets a CommRemoteException (or CommTimeoutException) naming the
 * dead rank, then exits 0. Run by CTest under commrun (java.peer_death.n3),
 * not by JUnit: a dead rank cannot go on.
 */
public final class PeerDeath {
  private PeerDeath() {}

  public static void main(String[] args) {
    Communicator world = Communicator.init();
    int victim = world.size() - 1;
    world.barrier();
    if (world.rank() == victim) {
      Runtime.getRuntime().halt(0);
    }
    try {
      world.recv(Tensor.allocate(DType.FLOAT64, 1), victim, 1);
    } catch (CommRemoteException | CommTimeoutException error) {
      if (!error.getMessage().contains("rank " + victim)) {
        throw new AssertionError("the message does not name rank " + victim + ": " + error.getMessage(), error);
      }
      System.out.println("survivor " + world.rank() + ": " + error.getClass().getSimpleName() + ": "
          + error.getMessage());
      System.out.flush();
      Runtime.getRuntime().halt(0); // the world cannot be left cleanly without the victim
    }
    throw new AssertionError("recv from a dead rank returned");
  }
}
