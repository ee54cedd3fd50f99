package org.libcomm;

/** Reduction operators, the C library's {@code comm_op_t}. */
public enum ReduceOp {
  SUM(comm_op_t.COMM_OP_SUM),
  PROD(comm_op_t.COMM_OP_PROD),
  MIN(comm_op_t.COMM_OP_MIN),
  MAX(comm_op_t.COMM_OP_MAX),
  /** The sum divided by the number of ranks; integer types truncate toward zero. */
  AVG(comm_op_t.COMM_OP_AVG),
  /** Bitwise and; integer and BOOL types only. */
  BAND(comm_op_t.COMM_OP_BAND),
  /** Bitwise or; integer and BOOL types only. */
  BOR(comm_op_t.COMM_OP_BOR),
  /** Bitwise exclusive or; integer and BOOL types only. */
  BXOR(comm_op_t.COMM_OP_BXOR);

  private final int code;

  ReduceOp(int code) {
    this.code = code;
  }

  int code() {
    return code;
  }
}
