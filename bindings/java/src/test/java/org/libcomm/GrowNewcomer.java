package org.libcomm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A newcomer for GroupsTest's grow tests: rank 0 starts it in a JVM of its
 * own, with COMM_JOIN=1 in its environment (argument "environment") or with
 * the setting "join" = "1" passed to {@link Communicator#init(Map)}
 * (argument "setting"). Its init joins the communicator the job's ranks
 * grow, and it makes the checks they make ({@link #check}). Exits 0 when
 * every check held. Run by the test, not by JUnit.
 */
public final class GrowNewcomer {
  private static final int STATE_LENGTH = 4099;

  private GrowNewcomer() {}

  public static void main(String[] args) {
    boolean bySetting = args.length > 0 && args[0].equals("setting");
    Map<String, String> settings = bySetting ? Map.of("join", "1") : Map.of();
    List<String> failed;
    int rank;
    int size;
    try (Communicator grown = Communicator.init(settings)) {
      rank = grown.rank();
      size = grown.size();
      failed = check(grown, size - 1);
    }
    if (rank != size - 1) {
      failed.add("the newcomer has rank " + rank + " of " + size + ", not the last");
    }
    System.out.println("newcomer, rank " + rank + " of " + size + ": "
        + (failed.isEmpty() ? "ok" : "FAILED: " + String.join("; ", failed)));
    System.out.flush();
    System.exit(failed.isEmpty() ? 0 : 1);
  }

  /** What rank 0 broadcasts to the grown communicator; the others start from -1. */
  private static long[] state(int rank) {
    long[] state = new long[STATE_LENGTH];
    for (int i = 0; i < STATE_LENGTH; ++i) {
      state[i] = rank == 0 ? i * 31L + 5 : -1;
    }
    return state;
  }

  /**
   * The checks every rank of a communicator grown by one newcomer makes,
   * the newcomer too, in the same order (each is a collective): the failed
   * ones, by name.
   */
  static List<String> check(Communicator grown, int oldSize) {
    List<String> failed = new ArrayList<>();
    int rank = grown.rank();
    int size = grown.size();
    if (size != oldSize + 1) {
      failed.add("size " + size + ", expected " + (oldSize + 1));
    }
    if (grown.toWorldRank(size - 1) != size - 1) { // a world of its own: its world ranks are its ranks
      failed.add("the newcomer's world rank");
    }
    long[] state = state(rank);
    grown.broadcast(state, 0);
    if (!Arrays.equals(state, state(0))) {
      failed.add("the broadcast state");
    }
    long[] sum = {rank * 7L + 1};
    grown.allReduce(sum, ReduceOp.SUM);
    long expected = 0;
    for (int r = 0; r < size; ++r) {
      expected += r * 7L + 1;
    }
    if (sum[0] != expected) {
      failed.add("allReduce gave " + sum[0] + ", expected " + expected);
    }
    return failed;
  }
}
