package org.libcomm;

/** A deadline passed before the operation completed; the message names what was awaited. */
public class CommTimeoutException extends CommException {
  private static final long serialVersionUID = 1L;

  public CommTimeoutException(String message) {
    super(Status.TIMEOUT, message);
  }
}
