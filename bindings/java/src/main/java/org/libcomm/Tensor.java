package org.libcomm;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A dense, C-contiguous array in a direct {@link ByteBuffer}: the buffer,
 * an element type and a shape. Communication calls read and write the
 * buffer's memory in place, with no copy. A tensor's "rows" are its slices
 * along dimension 0 (a 0-d tensor is one row of one element); the uneven
 * collectives count rows.
 *
 * <p>Multi-byte elements are in the platform's byte order: a buffer must
 * have {@code order(ByteOrder.nativeOrder())}, as {@link #allocate} and the
 * {@code copyOf} methods give it, and views made with {@link #buffer()}
 * have. A tensor is immutable and may be used by several threads and calls
 * at once; it keeps its buffer alive. Its native descriptor is released
 * when the tensor becomes unreachable.
 */
public final class Tensor {
  private static final Cleaner CLEANER = Cleaner.create();

  private final ByteBuffer data;  // null for device memory
  private final DType dtype;
  private final long[] shape;
  private final long numel;
  private final long deviceAddress;
  private final int device;  // the CUDA device ordinal, or -1 for host memory
  private final long descriptor;

  private Tensor(ByteBuffer data, DType dtype, long[] shape, long numel) {
    this.data = data;
    this.dtype = dtype;
    this.shape = shape;
    this.numel = numel;
    this.deviceAddress = 0;
    this.device = -1;
    long[] out = new long[1];
    CommNative.comm_tensor_create(out, data, dtype.code(), shape);
    descriptor = out[0];
    CLEANER.register(this, new Release(descriptor));
  }

  private Tensor(long address, int device, DType dtype, long[] shape, long numel) {
    this.data = null;
    this.dtype = dtype;
    this.shape = shape;
    this.numel = numel;
    this.deviceAddress = address;
    this.device = device;
    long[] out = new long[1];
    CommNative.comm_java_tensor_create_cuda(out, address, dtype.code(), shape, device);
    descriptor = out[0];
    CLEANER.register(this, new Release(descriptor));
  }

  /**
   * A tensor of {@code dtype} and {@code shape} in the memory of CUDA device
   * {@code device}, at device pointer {@code address} (from JCuda, a CUDA
   * array library or native code; the caller keeps the memory allocated
   * while comm uses it). Collectives on it take CUDA tensors only (a CUDA
   * output for a CUDA input: docs/cuda.md); it has no Java view, so
   * {@link #buffer()} and the {@code to...Array} copies throw.
   *
   * @throws IllegalArgumentException for a negative extent or more than 8 dimensions, or a device that does
   *     not exist
   * @throws CommException with status NOT_SUPPORTED where comm has no CUDA or no device is visible, naming
   *     the cause
   */
  public static Tensor ofDevice(long address, int device, DType dtype, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    return new Tensor(address, device, dtype, shape.clone(), numel("Tensor.ofDevice", shape));
  }

  /** A new zero-filled tensor of {@code dtype} and {@code shape}, in a direct buffer of native order. */
  public static Tensor allocate(DType dtype, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    long numel = numel("Tensor.allocate", shape);
    ByteBuffer data = ByteBuffer.allocateDirect(byteCount("Tensor.allocate", numel, dtype));
    return new Tensor(data.order(ByteOrder.nativeOrder()), dtype, shape.clone(), numel);
  }

  /**
   * A tensor of {@code dtype} and {@code shape} over the first bytes of
   * {@code buffer}'s remaining ones (from its position), which must be
   * enough. The buffer must be direct and, for elements wider than a byte,
   * in native byte order.
   *
   * @throws IllegalArgumentException for a heap buffer, the wrong byte order,
   *     too few bytes, a negative extent or more than 8 dimensions
   */
  public static Tensor of(ByteBuffer buffer, DType dtype, long... shape) {
    String call = "Tensor.of";
    Objects.requireNonNull(buffer, "buffer");
    Objects.requireNonNull(dtype, "dtype");
    long numel = numel(call, shape);
    int bytes = byteCount(call, numel, dtype);
    if (!buffer.isDirect()) {
      throw new IllegalArgumentException(call + ": the buffer is a heap buffer; comm needs a direct one "
          + "(ByteBuffer.allocateDirect(n).order(ByteOrder.nativeOrder()))");
    }
    if (dtype.size() > 1 && buffer.order() != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException(call + ": the buffer is " + buffer.order() + " but " + dtype
          + " data must be in native order (" + ByteOrder.nativeOrder() + "): use buffer.order(ByteOrder.nativeOrder())");
    }
    if (buffer.remaining() < bytes) {
      throw new IllegalArgumentException(call + ": a " + dtype + " tensor of shape " + Arrays.toString(shape)
          + " needs " + bytes + " bytes but the buffer has " + buffer.remaining() + " remaining");
    }
    ByteBuffer view = buffer.duplicate();
    view.limit(view.position() + bytes);
    return new Tensor(view.slice().order(ByteOrder.nativeOrder()), dtype, shape.clone(), numel);
  }

  /** A one-dimensional tensor over all of {@code buffer}'s remaining bytes; see {@link #of(ByteBuffer, DType, long...)}. */
  public static Tensor of(ByteBuffer buffer, DType dtype) {
    Objects.requireNonNull(buffer, "buffer");
    Objects.requireNonNull(dtype, "dtype");
    if (buffer.remaining() % dtype.size() != 0) {
      throw new IllegalArgumentException("Tensor.of: the buffer's " + buffer.remaining()
          + " remaining bytes are not a whole number of " + dtype + " elements");
    }
    return of(buffer, dtype, buffer.remaining() / dtype.size());
  }

  /** A new FLOAT32 tensor holding a copy of {@code values}, with shape [values.length]. */
  public static Tensor copyOf(float[] values) {
    Tensor tensor = allocate(DType.FLOAT32, values.length);
    tensor.data.asFloatBuffer().put(values);
    return tensor;
  }

  /** A new FLOAT64 tensor holding a copy of {@code values}, with shape [values.length]. */
  public static Tensor copyOf(double[] values) {
    Tensor tensor = allocate(DType.FLOAT64, values.length);
    tensor.data.asDoubleBuffer().put(values);
    return tensor;
  }

  /** A new INT32 tensor holding a copy of {@code values}, with shape [values.length]. */
  public static Tensor copyOf(int[] values) {
    Tensor tensor = allocate(DType.INT32, values.length);
    tensor.data.asIntBuffer().put(values);
    return tensor;
  }

  /** A new INT64 tensor holding a copy of {@code values}, with shape [values.length]. */
  public static Tensor copyOf(long[] values) {
    Tensor tensor = allocate(DType.INT64, values.length);
    tensor.data.asLongBuffer().put(values);
    return tensor;
  }

  /** A new INT8 tensor holding a copy of {@code values}, with shape [values.length]. */
  public static Tensor copyOf(byte[] values) {
    Tensor tensor = allocate(DType.INT8, values.length);
    tensor.data.duplicate().put(values);
    return tensor;
  }

  /** A copy of the elements of a FLOAT32 tensor. */
  public float[] toFloatArray() {
    float[] values = new float[elementsAs(DType.FLOAT32)];
    data.asFloatBuffer().get(values);
    return values;
  }

  /** A copy of the elements of a FLOAT64 tensor. */
  public double[] toDoubleArray() {
    double[] values = new double[elementsAs(DType.FLOAT64)];
    data.asDoubleBuffer().get(values);
    return values;
  }

  /** A copy of the elements of an INT32 tensor. */
  public int[] toIntArray() {
    int[] values = new int[elementsAs(DType.INT32)];
    data.asIntBuffer().get(values);
    return values;
  }

  /** A copy of the elements of an INT64 tensor. */
  public long[] toLongArray() {
    long[] values = new long[elementsAs(DType.INT64)];
    data.asLongBuffer().get(values);
    return values;
  }

  /** A copy of the bytes of a one-byte-element tensor (INT8, UINT8 or BOOL). */
  public byte[] toByteArray() {
    if (dtype.size() != 1) {
      throw new IllegalStateException("Tensor.toByteArray: the tensor is " + dtype + ", not a one-byte type");
    }
    byte[] values = new byte[(int) numel];
    hostData("Tensor.toByteArray").duplicate().get(values);
    return values;
  }

  /** The same memory seen with another shape of as many elements. */
  public Tensor reshape(long... shape) {
    long count = numel("Tensor.reshape", shape);
    if (count != numel) {
      throw new IllegalArgumentException("Tensor.reshape: shape " + Arrays.toString(shape) + " has " + count
          + " elements but the tensor has " + numel);
    }
    return data == null ? new Tensor(deviceAddress, device, dtype, shape.clone(), numel)
                        : new Tensor(data, dtype, shape.clone(), numel);
  }

  /** A view of the tensor's bytes, position 0, in native order (a new view on each call); host tensors only. */
  public ByteBuffer buffer() {
    return hostData("Tensor.buffer").duplicate().order(ByteOrder.nativeOrder());
  }

  /** The CUDA device ordinal of a tensor in device memory, or -1 for host memory. */
  public int device() {
    return device;
  }

  public DType dtype() {
    return dtype;
  }

  /** The extents (a copy). */
  public long[] shape() {
    return shape.clone();
  }

  public int ndim() {
    return shape.length;
  }

  /** The number of elements (1 for a 0-d tensor). */
  public long numel() {
    return numel;
  }

  public long nbytes() {
    return numel * dtype.size();
  }

  /** Slices along dimension 0 (1 for a 0-d tensor). */
  public long rows() {
    return shape.length == 0 ? 1 : shape[0];
  }

  @Override
  public String toString() {
    return "Tensor(" + dtype + ", " + Arrays.toString(shape) + (device >= 0 ? ", cuda:" + device : "") + ")";
  }

  /** The native descriptor; callers keep this tensor reachable until their native call returns. */
  long descriptor() {
    return descriptor;
  }

  /** The host buffer; a CUDA tensor has none, and says so naming {@code call}. */
  private ByteBuffer hostData(String call) {
    if (data == null) {
      throw new IllegalStateException(call + ": the tensor is in the memory of CUDA device " + device
          + " and has no Java view");
    }
    return data;
  }

  private int elementsAs(DType expected) {
    hostData("Tensor: a copy to a Java array");
    if (dtype != expected) {
      throw new IllegalStateException("Tensor: the tensor is " + dtype + ", not " + expected);
    }
    return (int) numel;
  }

  private static long numel(String call, long[] shape) {
    Objects.requireNonNull(shape, "shape");
    if (shape.length > CommNative.comm_java_max_dims()) {
      throw new IllegalArgumentException(call + ": shape " + Arrays.toString(shape) + " has more than "
          + CommNative.comm_java_max_dims() + " dimensions");
    }
    long count = 1;
    for (long extent : shape) {
      if (extent < 0) {
        throw new IllegalArgumentException(call + ": shape " + Arrays.toString(shape) + " has a negative extent");
      }
      try {
        count = Math.multiplyExact(count, extent);
      } catch (ArithmeticException overflow) {
        throw new IllegalArgumentException(call + ": shape " + Arrays.toString(shape) + " has too many elements");
      }
    }
    return count;
  }

  private static int byteCount(String call, long numel, DType dtype) {
    if (numel > Integer.MAX_VALUE / dtype.size()) {
      throw new IllegalArgumentException(call + ": " + numel + " " + dtype + " elements do not fit in a ByteBuffer");
    }
    return (int) numel * dtype.size();
  }

  /** Frees a descriptor; holds no reference to its tensor, so the tensor can become unreachable. */
  private static final class Release implements Runnable {
    private final long descriptor;

    Release(long descriptor) {
      this.descriptor = descriptor;
    }

    @Override
    public void run() {
      CommNative.comm_tensor_destroy(descriptor);
    }
  }
}
