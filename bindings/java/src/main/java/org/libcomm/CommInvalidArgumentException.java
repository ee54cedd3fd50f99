package org.libcomm;

/**
 * The C library refused an argument ({@link Status#INVALID_ARGUMENT}): an
 * op not defined for the dtype, splits that do not add up to the rows...
 * It is an {@link IllegalArgumentException}, like the arguments Java checks
 * itself, so one catch handles a bad argument whichever side saw it; the
 * message is the C library's, naming the call and the cause.
 */
public class CommInvalidArgumentException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  CommInvalidArgumentException(String message) {
    super(message);
  }

  /** Always {@link Status#INVALID_ARGUMENT}. */
  public Status status() {
    return Status.INVALID_ARGUMENT;
  }
}
