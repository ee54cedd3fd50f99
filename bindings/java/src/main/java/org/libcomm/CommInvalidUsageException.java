package org.libcomm;

/**
 * A call on an object in the wrong state ({@link Status#INVALID_USAGE}): a
 * closed communicator or handle, whether Java or the C library noticed it.
 * It is an {@link IllegalStateException}.
 */
public class CommInvalidUsageException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  CommInvalidUsageException(String message) {
    super(message);
  }

  /** Always {@link Status#INVALID_USAGE}. */
  public Status status() {
    return Status.INVALID_USAGE;
  }
}
