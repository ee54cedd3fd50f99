package org.libcomm;

/**
 * The world communicator of this test JVM (one rank of a commrun job),
 * joined by the first test that needs it and closed when the JVM exits.
 * Every test class runs on every rank in the same order (the launcher is
 * configured to order classes and methods by name), so collectives match.
 */
final class World {
  private static Communicator world;

  private World() {}

  static synchronized Communicator get() {
    if (world == null) {
      // Joined without blocking (the examples use init()).
      Pending<Communicator> joining = Communicator.initAsync();
      world = joining.await();
      if (joining.await() != world || !joining.isDone()) {
        throw new AssertionError("initAsync's Pending gave another world");
      }
      joining.close(); // the world is the caller's: it stays open
      Communicator joined = world;
      Runtime.getRuntime().addShutdownHook(new Thread(joined::close));
    }
    return world;
  }
}
