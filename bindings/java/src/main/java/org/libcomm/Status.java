package org.libcomm;

/** Why a call failed: the error values of the C library's {@code comm_status_t}. */
public enum Status {
  /** A null, out-of-range or inconsistent argument: thrown as {@link CommInvalidArgumentException}. */
  INVALID_ARGUMENT(comm_status_t.COMM_ERR_INVALID_ARGUMENT),
  /** A call in the wrong state, a closed communicator or handle: thrown as {@link CommInvalidUsageException}. */
  INVALID_USAGE(comm_status_t.COMM_ERR_INVALID_USAGE),
  /** Valid, but not available in this build or for this dtype and op. */
  NOT_SUPPORTED(comm_status_t.COMM_ERR_NOT_SUPPORTED),
  NO_MEMORY(comm_status_t.COMM_ERR_NO_MEMORY),
  /** A deadline passed; the message names what was awaited. */
  TIMEOUT(comm_status_t.COMM_ERR_TIMEOUT),
  /** A peer died or reported a failure; the message names it. */
  REMOTE(comm_status_t.COMM_ERR_REMOTE),
  /** Ranks called different collectives or passed different arguments. */
  MISMATCH(comm_status_t.COMM_ERR_MISMATCH),
  /** The communicator was aborted. */
  ABORTED(comm_status_t.COMM_ERR_ABORTED),
  /** The fabric failed. */
  TRANSPORT(comm_status_t.COMM_ERR_TRANSPORT),
  /** Rendezvous or the launcher's environment failed. */
  BOOTSTRAP(comm_status_t.COMM_ERR_BOOTSTRAP),
  /** A bug in comm; please report the message. Also stands for codes this binding does not know. */
  INTERNAL(comm_status_t.COMM_ERR_INTERNAL),
  /** The communicator was revoked, on this rank or another; the message names the rank. */
  REVOKED(comm_status_t.COMM_ERR_REVOKED);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  /** The C value ({@code COMM_ERR_*}). */
  public int code() {
    return code;
  }

  static Status of(int code) {
    for (Status status : values()) {
      if (status.code == code) {
        return status;
      }
    }
    return INTERNAL;
  }
}
