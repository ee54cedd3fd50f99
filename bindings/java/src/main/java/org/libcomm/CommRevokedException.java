package org.libcomm;

/**
 * The communicator was revoked ({@link Communicator#revoke()}), on this rank
 * or on another: the message names the rank.
 */
public class CommRevokedException extends CommException {
  private static final long serialVersionUID = 1L;

  public CommRevokedException(String message) {
    super(Status.REVOKED, message);
  }
}
