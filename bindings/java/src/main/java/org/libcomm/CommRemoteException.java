package org.libcomm;

/** A peer died or reported a failure; the message names it. */
public class CommRemoteException extends CommException {
  private static final long serialVersionUID = 1L;

  public CommRemoteException(String message) {
    super(Status.REMOTE, message);
  }
}
