import java.nio.FloatBuffer;
import java.time.Duration;
import org.libcomm.Communicator;
import org.libcomm.DType;
import org.libcomm.Handle;
import org.libcomm.ReduceOp;
import org.libcomm.Tensor;

/**
 * Data-parallel averaging, the way a training loop uses comm: every rank
 * computes a "gradient" over its own shard, the ranks average it with an
 * async all-reduce while the rank does other work, then check the result.
 *
 * <pre>
 *   commrun -n 4 java -cp comm.jar:comm-examples.jar AllReduceExample
 * </pre>
 */
public final class AllReduceExample {
  public static void main(String[] args) {
    try (Communicator world = Communicator.init()) {
      int rank = world.rank();
      int size = world.size();
      int count = 1 << 20;

      // The gradient lives in a direct buffer that comm reads and writes in place.
      Tensor gradient = Tensor.allocate(DType.FLOAT32, count);
      FloatBuffer values = gradient.buffer().asFloatBuffer();
      for (int i = 0; i < count; ++i) {
        values.put(i, rank + i % 7);
      }

      long started = System.nanoTime();
      try (Handle pending = world.allReduceAsync(gradient, ReduceOp.AVG)) {
        // ... overlap: the next batch would be prepared here ...
        pending.await(Duration.ofSeconds(30));
      }
      double millis = (System.nanoTime() - started) / 1e6;

      float meanRank = (size - 1) / 2.0f;
      for (int i = 0; i < count; ++i) {
        float expected = meanRank + i % 7;
        if (Math.abs(values.get(i) - expected) > 1e-5f) {
          System.err.printf("rank %d: element %d is %f, expected %f%n", rank, i, values.get(i), expected);
          System.exit(1);
        }
      }

      // The array overloads copy, which is fine for small values.
      long[] steps = {rank + 1};
      world.allReduce(steps, ReduceOp.SUM);
      if (rank == 0) {
        System.out.printf("averaged %d floats over %d ranks in %.1f ms; sum of 1..%d = %d (comm %s)%n",
            count, size, millis, size, steps[0], Communicator.version());
      }
    }
  }
}
