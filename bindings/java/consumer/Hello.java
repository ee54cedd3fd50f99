import org.libcomm.Communicator;
import org.libcomm.ReduceOp;

/** A program that only sees the installed comm.jar: sums the ranks and checks the total. */
public final class Hello {
  public static void main(String[] args) {
    try (Communicator world = Communicator.init()) {
      int[] value = {world.rank()};
      world.allReduce(value, ReduceOp.SUM);
      int expected = world.size() * (world.size() - 1) / 2;
      if (value[0] != expected) {
        System.err.println("sum of ranks is " + value[0] + ", expected " + expected);
        System.exit(1);
      }
      System.out.println("rank " + world.rank() + " of " + world.size() + ": sum of ranks " + value[0]);
    }
  }
}
