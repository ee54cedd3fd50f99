package org.libcomm;

/**
 * Java arrays through direct buffers for the array overloads of
 * Communicator: the C library needs memory that stays put, which a heap
 * array is not while the call blocks.
 */
final class ArrayStaging {
  private ArrayStaging() {}

  /** A new tensor holding a copy of {@code array} (float[], double[], int[], long[] or byte[]). */
  static Tensor copyIn(Object array) {
    if (array instanceof float[]) {
      return Tensor.copyOf((float[]) array);
    } else if (array instanceof double[]) {
      return Tensor.copyOf((double[]) array);
    } else if (array instanceof int[]) {
      return Tensor.copyOf((int[]) array);
    } else if (array instanceof long[]) {
      return Tensor.copyOf((long[]) array);
    } else if (array instanceof byte[]) {
      return Tensor.copyOf((byte[]) array);
    }
    throw new NullPointerException("an array argument is null");
  }

  /** Copy the elements of {@code tensor} (made by copyIn from {@code array}) back into {@code array}. */
  static void copyOut(Tensor tensor, Object array) {
    if (array instanceof float[]) {
      tensor.buffer().asFloatBuffer().get((float[]) array);
    } else if (array instanceof double[]) {
      tensor.buffer().asDoubleBuffer().get((double[]) array);
    } else if (array instanceof int[]) {
      tensor.buffer().asIntBuffer().get((int[]) array);
    } else if (array instanceof long[]) {
      tensor.buffer().asLongBuffer().get((long[]) array);
    } else {
      tensor.buffer().get((byte[]) array);
    }
  }
}
