package org.libcomm;

import java.nio.charset.StandardCharsets;

/**
 * A call failed in the C library (or was refused in Java because of the
 * state of an object, such as a closed communicator). The message is the C
 * library's: it names the call, the object and the cause. Failures with
 * their own remedy have subclasses: {@link CommTimeoutException},
 * {@link CommRemoteException}, {@link CommMismatchException} and
 * {@link CommAbortedException}.
 */
public class CommException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;

  public CommException(Status status, String message) {
    super(message);
    this.status = status;
  }

  /** Why the call failed. */
  public Status status() {
    return status;
  }

  /** Called by the JNI layer for a negative comm_status_t; the message is UTF-8. */
  static CommException fromNative(int code, byte[] message) {
    String text = new String(message, StandardCharsets.UTF_8);
    Status status = Status.of(code);
    switch (status) {
      case TIMEOUT:
        return new CommTimeoutException(text);
      case REMOTE:
        return new CommRemoteException(text);
      case MISMATCH:
        return new CommMismatchException(text);
      case ABORTED:
        return new CommAbortedException(text);
      default:
        return new CommException(status, text);
    }
  }
}
