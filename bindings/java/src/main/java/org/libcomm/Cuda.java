package org.libcomm;

import java.nio.charset.StandardCharsets;

/**
 * What the loaded C library and this machine offer device tensors
 * ({@link Tensor#ofDevice}): a build of comm without CUDA refuses them
 * with a {@link CommException} of status NOT_SUPPORTED saying the call
 * needs a build with CUDA; a build with CUDA on a machine that shows no
 * device refuses them saying no CUDA device is visible, and why.
 */
public final class Cuda {
  private Cuda() {}

  /** True when the loaded C library was built with CUDA device memory. */
  public static boolean isBuilt() {
    int[] out = new int[1];
    CommNative.comm_has_feature(out, comm_feature_t.COMM_FEATURE_CUDA);
    return out[0] == 1;
  }

  /** The number of CUDA devices this process sees: 0 without CUDA in the build, a driver or a GPU. */
  public static int deviceCount() {
    int[] count = new int[1];
    CommNative.comm_cuda_device_count(count, new byte[1][]);
    return count[0];
  }

  /** Why no CUDA device is visible, in words; "" when one is. */
  public static String unavailableReason() {
    int[] count = new int[1];
    byte[][] reason = new byte[1][];
    CommNative.comm_cuda_device_count(count, reason);
    return new String(reason[0], StandardCharsets.UTF_8);
  }
}
