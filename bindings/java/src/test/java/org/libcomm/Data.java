package org.libcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;

/**
 * Test data in every dtype and reference results. Inputs are small integers
 * (1..3, or 0/1 for BOOL) so that sums, products and averages over a few
 * ranks are exact in every dtype; integer results wrap like the C library's.
 */
final class Data {
  private Data() {}

  /** Rank {@code rank}'s element {@code i}: 1..3, or 0/1 for BOOL. */
  static long value(DType dtype, int rank, long i, int salt) {
    long base = (i * 5 + rank * 3 + salt) % 3;
    return dtype == DType.BOOL ? (base == 0 ? 1 : 0) : base + 1;
  }

  static Tensor filled(DType dtype, int rank, int salt, long... shape) {
    Tensor tensor = Tensor.allocate(dtype, shape);
    for (long i = 0; i < tensor.numel(); ++i) {
      put(tensor, i, value(dtype, rank, i, salt));
    }
    return tensor;
  }

  /** Store {@code value} as element {@code i} of {@code tensor}. */
  static void put(Tensor tensor, long i, double value) {
    ByteBuffer b = tensor.buffer();
    int at = Math.toIntExact(i * tensor.dtype().size());
    switch (tensor.dtype()) {
      case INT8:
      case UINT8:
        b.put(at, (byte) (long) value);
        break;
      case BOOL:
        b.put(at, (byte) (value != 0 ? 1 : 0));
        break;
      case INT16:
      case UINT16:
        b.putShort(at, (short) (long) value);
        break;
      case FLOAT16:
        b.putShort(at, toFloat16((float) value));
        break;
      case BFLOAT16:
        b.putShort(at, (short) (Float.floatToIntBits((float) value) >>> 16));
        break;
      case INT32:
      case UINT32:
        b.putInt(at, (int) (long) value);
        break;
      case INT64:
      case UINT64:
        b.putLong(at, (long) value);
        break;
      case FLOAT32:
        b.putFloat(at, (float) value);
        break;
      case FLOAT64:
        b.putDouble(at, value);
        break;
    }
  }

  /** Element {@code i} of {@code tensor} as a double (unsigned types as unsigned). */
  static double get(Tensor tensor, long i) {
    ByteBuffer b = tensor.buffer();
    int at = Math.toIntExact(i * tensor.dtype().size());
    switch (tensor.dtype()) {
      case INT8:
      case BOOL:
        return b.get(at);
      case UINT8:
        return b.get(at) & 0xff;
      case INT16:
        return b.getShort(at);
      case UINT16:
        return b.getShort(at) & 0xffff;
      case FLOAT16:
        return fromFloat16(b.getShort(at));
      case BFLOAT16:
        return Float.intBitsToFloat((b.getShort(at) & 0xffff) << 16);
      case INT32:
        return b.getInt(at);
      case UINT32:
        return b.getInt(at) & 0xffffffffL;
      case INT64:
      case UINT64:
        return b.getLong(at);
      case FLOAT32:
        return b.getFloat(at);
      default:
        return b.getDouble(at);
    }
  }

  static boolean isFloat(DType dtype) {
    return dtype == DType.FLOAT16 || dtype == DType.BFLOAT16 || dtype == DType.FLOAT32 || dtype == DType.FLOAT64;
  }

  static boolean supports(DType dtype, ReduceOp op) {
    if (dtype == DType.BOOL) {
      return op != ReduceOp.AVG; // the mean of bools is no bool
    }
    return !isFloat(dtype) || op.compareTo(ReduceOp.AVG) <= 0;
  }

  /** {@code op} over element {@code i} of every rank's {@code value(...)}, as stored in {@code dtype}. */
  static double reduced(DType dtype, ReduceOp op, int size, long i, int salt) {
    long[] values = new long[size];
    for (int r = 0; r < size; ++r) {
      values[r] = value(dtype, r, i, salt);
    }
    if (dtype == DType.BOOL) {
      boolean any = false;
      boolean all = true;
      boolean odd = false;
      for (long v : values) {
        any |= v != 0;
        all &= v != 0;
        odd ^= v != 0;
      }
      switch (op) {
        case PROD:
        case MIN:
        case BAND:
          return all ? 1 : 0;
        case BXOR:
          return odd ? 1 : 0;
        default:
          return any ? 1 : 0;
      }
    }
    long result = values[0];
    for (int r = 1; r < size; ++r) {
      long v = values[r];
      switch (op) {
        case SUM:
        case AVG:
          result += v;
          break;
        case PROD:
          result *= v;
          break;
        case MIN:
          result = Math.min(result, v);
          break;
        case MAX:
          result = Math.max(result, v);
          break;
        case BAND:
          result &= v;
          break;
        case BOR:
          result |= v;
          break;
        case BXOR:
          result ^= v;
          break;
      }
    }
    if (op == ReduceOp.AVG) {
      return isFloat(dtype) ? (double) result / size : result / size;
    }
    return stored(dtype, result);
  }

  /** An integer result as {@code dtype} stores it (wrapping), read back as {@link #get} would. */
  static double stored(DType dtype, long value) {
    Tensor one = Tensor.allocate(dtype, 1);
    put(one, 0, value);
    return get(one, 0);
  }

  /** Every element of {@code tensor} is {@code expected.at(i)} (floats to 1e-2 relative: float16 averages). */
  static void assertElements(Tensor tensor, Expected expected, String what) {
    for (long i = 0; i < tensor.numel(); ++i) {
      double want = expected.at(i);
      double tolerance = isFloat(tensor.dtype()) ? Math.abs(want) * 1e-2 : 0;
      assertEquals(want, get(tensor, i), tolerance, what + ", element " + i);
    }
  }

  @FunctionalInterface
  interface Expected {
    double at(long i);
  }

  private static short toFloat16(float value) {
    int bits = Float.floatToIntBits(value);
    int sign = (bits >>> 16) & 0x8000;
    if ((bits & 0x7fffffff) == 0) {
      return (short) sign;
    }
    int exponent = ((bits >>> 23) & 0xff) - 127 + 15;
    int mantissa = (bits >>> 13) & 0x3ff; // the test values are exact in float16
    return (short) (sign | exponent << 10 | mantissa);
  }

  private static float fromFloat16(short half) {
    int sign = (half & 0x8000) << 16;
    int exponent = (half >>> 10) & 0x1f;
    int mantissa = half & 0x3ff;
    if (exponent == 0 && mantissa == 0) {
      return Float.intBitsToFloat(sign);
    }
    return Float.intBitsToFloat(sign | (exponent - 15 + 127) << 23 | mantissa << 13);
  }
}
