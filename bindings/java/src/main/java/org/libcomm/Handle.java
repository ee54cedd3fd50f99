package org.libcomm;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An operation started by one of the {@code ...Async} calls. Its output
 * tensors are filled once {@link #await()} returns or {@link #isDone()}
 * says true; until then the handle keeps the call's tensors alive, and their
 * buffers must not be touched.
 *
 * <p>The first of {@code await} / {@code isDone} to see the operation
 * complete releases its native handle; later calls give the same outcome.
 * {@link #close()} waits for a running operation (so buffers are never
 * written after it returns) without reporting its failure. Closing the
 * communicator closes its handles. Methods may be called from any thread.
 */
public final class Handle implements AutoCloseable {
  private final Communicator owner;
  private final String call;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  // Guarded by lock. handle is 0 once the operation completed or the handle
  // was closed; keep holds the call's tensors (and so their buffers) until then.
  private long handle;
  private Object keep;
  private RuntimeException failure;
  private boolean closed;

  Handle(Communicator owner, String call, long handle, Object keep) {
    this.owner = owner;
    this.call = call;
    this.handle = handle;
    this.keep = keep;
  }

  /**
   * Wait until the operation completes, at most the communicator's timeout.
   *
   * @throws CommException the operation's failure (again on every later call)
   */
  public void await() {
    waitFor(CommNative.comm_java_timeout_default(), "Handle.await");
  }

  /**
   * Wait until the operation completes, at most {@code timeout}. When the
   * timeout passes first, throws a {@link CommTimeoutException} and the
   * operation goes on: wait again later.
   *
   * @throws CommException the operation's failure (again on every later call)
   */
  public void await(Duration timeout) {
    waitFor(Math.max(0, millis(timeout)), "Handle.await");
  }

  /** {@code duration} in milliseconds, Long.MAX_VALUE when longer. */
  static long millis(Duration duration) {
    try {
      return duration.toMillis();
    } catch (ArithmeticException longerThanAnyDeadline) {
      return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * True once the operation has completed, false while it runs.
   *
   * @throws CommException the operation's failure
   */
  public boolean isDone() {
    RuntimeException error = null;
    lock.readLock().lock();
    try {
      ensureOpen("Handle.isDone");
      if (handle == 0) {
        throwFailure();
        return true;
      }
      try {
        if (CommNative.comm_handle_test(handle) == comm_status_t.COMM_IN_PROGRESS) {
          return false;
        }
      } catch (RuntimeException operationFailed) {
        error = operationFailed;
      }
    } finally {
      lock.readLock().unlock();
    }
    complete(error);
    return true;
  }

  /** Wait for the operation if it still runs, then release the handle. Idempotent. */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      release();
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return "Handle(" + call + ")";
  }

  private void waitFor(long timeoutMs, String what) {
    RuntimeException error;
    lock.readLock().lock();
    try {
      ensureOpen(what);
      if (handle == 0) {
        throwFailure();
        return;
      }
      error = waitNative(handle, timeoutMs);
    } finally {
      lock.readLock().unlock();
    }
    complete(error);
  }

  /**
   * The operation's failure, or null; throws when an explicit timeout ran
   * out first. A failure is whatever the JNI layer throws for the status
   * (CommException.fromNative), not only a CommException.
   */
  static RuntimeException waitNative(long handle, long timeoutMs) {
    try {
      CommNative.comm_handle_wait(handle, timeoutMs);
      return null;
    } catch (CommTimeoutException ranOut) {
      if (timeoutMs == CommNative.comm_java_timeout_default()) {
        return ranOut; // the communicator's deadline: the operation failed
      }
      boolean running;
      try {
        running = CommNative.comm_handle_test(handle) == comm_status_t.COMM_IN_PROGRESS;
      } catch (RuntimeException operationFailed) {
        return operationFailed;
      }
      if (running) {
        throw ranOut; // this wait's timeout: the operation goes on
      }
      return null;
    } catch (RuntimeException operationFailed) {
      return operationFailed;
    }
  }

  /** Record the outcome a caller saw (the first one wins) and report it. */
  private void complete(RuntimeException error) {
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        failure = error;
        release();
      }
      throwFailure();
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void throwFailure() {
    if (failure != null) {
      throw failure;
    }
  }

  private void release() {
    long released = handle;
    handle = 0;
    keep = null;
    owner.forget(this);
    if (released != 0) {
      // Waits for a running operation: buffers are not written after this.
      CommNative.comm_handle_destroy(released);
    }
  }

  private void ensureOpen(String what) {
    if (closed) {
      throw new CommInvalidUsageException(what + ": the handle of " + call + " is closed");
    }
  }
}
