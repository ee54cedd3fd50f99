package org.libcomm;

/** Ranks called different collectives or passed different arguments (dtype, count, root). */
public class CommMismatchException extends CommException {
  private static final long serialVersionUID = 1L;

  public CommMismatchException(String message) {
    super(Status.MISMATCH, message);
  }
}
