package org.libcomm;

import java.nio.charset.StandardCharsets;

/**
 * A call failed in the C library. The message is the C library's: it names
 * the call, the object and the cause. Failures with their own remedy have
 * subclasses: {@link CommTimeoutException}, {@link CommRemoteException},
 * {@link CommMismatchException}, {@link CommAbortedException} and
 * {@link CommRevokedException}. Misuse is
 * not a CommException but what Java programs catch for it, with the same
 * {@code status()}: a bad argument is an {@link IllegalArgumentException}
 * ({@link CommInvalidArgumentException} when the C library refused it), a
 * closed communicator or handle an {@link IllegalStateException}
 * ({@link CommInvalidUsageException}).
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

  /**
   * Called by the JNI layer for a negative comm_status_t (the message is
   * UTF-8): the exception to throw for it.
   */
  static RuntimeException fromNative(int code, byte[] message) {
    String text = new String(message, StandardCharsets.UTF_8);
    Status status = Status.of(code);
    switch (status) {
      case INVALID_ARGUMENT:
        return new CommInvalidArgumentException(text);
      case INVALID_USAGE:
        return new CommInvalidUsageException(text);
      case TIMEOUT:
        return new CommTimeoutException(text);
      case REMOTE:
        return new CommRemoteException(text);
      case MISMATCH:
        return new CommMismatchException(text);
      case ABORTED:
        return new CommAbortedException(text);
      case REVOKED:
        return new CommRevokedException(text);
      default:
        return new CommException(status, text);
    }
  }
}
