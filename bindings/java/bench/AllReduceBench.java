import org.libcomm.Communicator;
import org.libcomm.DType;
import org.libcomm.ReduceOp;
import org.libcomm.Tensor;

/**
 * The Java binding against the C library on one job: per-call time of a
 * blocking 8-byte all_reduce and the bandwidth (bytes per second of one
 * rank's buffer) of a 64 MiB one, best of several rounds; the same loop and
 * output as comm-go-bench, whose -impl=c is the C reference:
 *
 * <pre>
 *   commrun -n 2 comm-go-bench -impl=c
 *   commrun -n 2 java -cp comm.jar:comm-java-bench.jar AllReduceBench
 * </pre>
 */
public final class AllReduceBench {
  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    try (Communicator world = Communicator.init()) {
      int[][] sizes = {{2, 20000}, {16 << 20, 5}}; // {float32 count, calls}
      for (int[] size : sizes) {
        Tensor in = Tensor.allocate(DType.FLOAT32, size[0]);
        Tensor out = Tensor.allocate(DType.FLOAT32, size[0]);
        java.nio.FloatBuffer values = in.buffer().asFloatBuffer();
        for (int i = 0; i < size[0]; ++i) { // as the C and Go loops do
          values.put(i, 1);
        }
        double best = Double.MAX_VALUE;
        for (int round = -1; round < rounds; ++round) { // round -1 warms up (and JIT-compiles)
          world.barrier();
          long start = System.nanoTime();
          for (int i = 0; i < size[1]; ++i) {
            world.allReduce(in, out, ReduceOp.SUM);
          }
          double seconds = (System.nanoTime() - start) / 1e9 / size[1];
          if (round >= 0) {
            best = Math.min(best, seconds);
          }
        }
        if (world.rank() == 0) {
          long bytes = size[0] * 4L;
          System.out.printf("impl=java all_reduce bytes=%d time_per_call_us=%.2f bandwidth_GBps=%.3f%n",
              bytes, best * 1e6, bytes / best / 1e9);
        }
      }
    }
  }
}
