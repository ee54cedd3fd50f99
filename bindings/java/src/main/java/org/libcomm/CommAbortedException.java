package org.libcomm;

/** The communicator was aborted ({@link Communicator#abort()}). */
public class CommAbortedException extends CommException {
  private static final long serialVersionUID = 1L;

  public CommAbortedException(String message) {
    super(Status.ABORTED, message);
  }
}
