import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import org.libcomm.Communicator;
import org.libcomm.ReduceOp;

/**
 * Run with comm.jar as the whole classpath (java -cp comm.jar JarAlone.java)
 * and no java.library.path of comm's: the jar must load the native
 * libraries it carries, and an all_reduce must match a reference computed
 * here on every rank.
 */
public final class JarAlone {
  private JarAlone() {}

  public static void main(String[] args) throws IOException {
    try (Communicator world = Communicator.init()) {
      int rank = world.rank();
      int size = world.size();
      double[] sums = new double[1000];
      long[] maxima = new long[1000];
      for (int i = 0; i < sums.length; ++i) {
        sums[i] = contribution(rank, i);
        maxima[i] = (rank * 7L + i) % 13;
      }
      world.allReduce(sums, ReduceOp.SUM);
      world.allReduce(maxima, ReduceOp.MAX);
      for (int i = 0; i < sums.length; ++i) {
        double expectedSum = 0;
        long expectedMax = 0;
        for (int r = 0; r < size; ++r) {
          expectedSum += contribution(r, i);
          expectedMax = Math.max(expectedMax, (r * 7L + i) % 13);
        }
        if (sums[i] != expectedSum || maxima[i] != expectedMax) {
          fail("element " + i + ": sum " + sums[i] + " (expected " + expectedSum + "), max " + maxima[i]
              + " (expected " + expectedMax + ")");
        }
      }
      List<String> natives = loadedNatives();
      String extracted = Paths.get(System.getProperty("java.io.tmpdir")).toRealPath().toString();
      if (!natives.stream().allMatch(path -> path.startsWith(extracted))) {
        fail("comm libraries were loaded from outside the jar: " + natives);
      }
      for (String name : new String[] {"libcomm_jni.so", "libcomm_jni_signals.so", "libcomm.so.0"}) {
        if (natives.stream().noneMatch(path -> path.startsWith(extracted) && path.contains("/" + name))) {
          fail(name + " was not loaded from the jar (extracted under " + extracted + "): " + natives);
        }
      }
      System.out.println("rank " + rank + " of " + size + ": all_reduce of 1000 double (sum) and long (max) as the "
          + "reference, natives from the jar: " + natives);
    }
  }

  private static double contribution(int rank, int i) {
    return rank * 1000.0 + i * 0.5;
  }

  /**
   * The comm libraries mapped into this process: the path field of
   * /proc/self/maps, " (deleted)" included for files removed once loaded.
   */
  private static List<String> loadedNatives() throws IOException {
    return Files.readAllLines(Paths.get("/proc/self/maps")).stream()
        .map(line -> line.trim().split("\\s+", 6))
        .filter(fields -> fields.length == 6 && fields[5].contains("/libcomm"))
        .map(fields -> fields[5])
        .distinct()
        .sorted()
        .collect(Collectors.toList());
  }

  private static void fail(String message) {
    System.err.println("FAILED: " + message);
    System.exit(1);
  }
}
