package org.libcomm;

/**
 * Element types of tensors, the C library's {@code comm_dtype_t}. Data is in
 * the platform's byte order; FLOAT16 and BFLOAT16 elements are 16-bit
 * patterns (Java has no such primitive), BOOL elements bytes 0 and 1.
 */
public enum DType {
  INT8(comm_dtype_t.COMM_INT8, 1),
  UINT8(comm_dtype_t.COMM_UINT8, 1),
  INT16(comm_dtype_t.COMM_INT16, 2),
  UINT16(comm_dtype_t.COMM_UINT16, 2),
  INT32(comm_dtype_t.COMM_INT32, 4),
  UINT32(comm_dtype_t.COMM_UINT32, 4),
  INT64(comm_dtype_t.COMM_INT64, 8),
  UINT64(comm_dtype_t.COMM_UINT64, 8),
  FLOAT16(comm_dtype_t.COMM_FLOAT16, 2),
  BFLOAT16(comm_dtype_t.COMM_BFLOAT16, 2),
  FLOAT32(comm_dtype_t.COMM_FLOAT32, 4),
  FLOAT64(comm_dtype_t.COMM_FLOAT64, 8),
  BOOL(comm_dtype_t.COMM_BOOL, 1);

  private final int code;
  private final int size;

  DType(int code, int size) {
    this.code = code;
    this.size = size;
  }

  /** Bytes per element. */
  public int size() {
    return size;
  }

  int code() {
    return code;
  }
}
