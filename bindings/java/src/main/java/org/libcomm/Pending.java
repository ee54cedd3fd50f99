package org.libcomm;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/**
 * A communicator being made without blocking, by {@link Communicator#initAsync()},
 * {@link Communicator#splitAsync}, {@link Communicator#createGroupAsync},
 * {@link Communicator#shrinkAsync()} or {@link Communicator#growAsync(int)}.
 * {@link #await()} (or {@link #isDone()} saying true) gives the communicator
 * once it is made; before that there is none to call.
 *
 * <p>The communicator belongs where the blocking call would put it: to the
 * caller for {@code initAsync}, to the parent for {@code splitAsync} and
 * {@code createGroupAsync}, to the world for {@code shrinkAsync} and
 * {@code growAsync}. Closing that owner closes its pending makings first,
 * giving up those still running. Methods may be called from any thread.
 *
 * @param <T> {@link Communicator}, or {@code Optional<Communicator>} for a split
 */
public final class Pending<T> implements AutoCloseable {
  private final Communicator owner; // null for initAsync
  private final String call;
  private final Function<Communicator, T> result;
  // Held (shared) by every native call on handle, exclusively to settle.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  // abort() skips the lock, so as not to queue behind a waiting close(); this
  // monitor keeps it off a communicator being freed.
  private final Object abortGuard = new Object();
  // Guarded by lock (comm also by abortGuard). Both are 0 once settled; comm
  // is 0 from the start for a split with UNDEFINED.
  private long handle;
  private long comm;
  private Communicator made;
  private RuntimeException failure;

  Pending(Communicator owner, String call, long comm, long handle, Function<Communicator, T> result) {
    this.owner = owner;
    this.call = call;
    this.comm = comm;
    this.handle = handle;
    this.result = result;
  }

  /**
   * Wait until the communicator is made, at most the configured timeout,
   * and return it (the same one on every later call).
   *
   * @throws CommException the making's failure (again on every later call):
   *     {@link CommAbortedException} after {@link #abort()}
   */
  public T await() {
    return waitFor(CommNative.comm_java_timeout_default());
  }

  /**
   * {@link #await()} waiting at most {@code timeout}: when it passes first,
   * throws a {@link CommTimeoutException} and the making goes on.
   */
  public T await(Duration timeout) {
    return waitFor(Math.max(0, Handle.millis(timeout)));
  }

  /**
   * True once the making has completed ({@link #await()} then returns at
   * once), false while it runs.
   *
   * @throws CommException the making's failure
   */
  public boolean isDone() {
    RuntimeException error = null;
    lock.readLock().lock();
    try {
      if (handle == 0) {
        outcome();
        return true;
      }
      try {
        if (CommNative.comm_handle_test(handle) == comm_status_t.COMM_IN_PROGRESS) {
          return false;
        }
      } catch (RuntimeException makingFailed) {
        error = makingFailed;
      }
    } finally {
      lock.readLock().unlock();
    }
    settle(error);
    return true;
  }

  /**
   * Give up a making still running: {@link #await()} then throws
   * {@link CommAbortedException} at once. Does nothing once it completed.
   * Callable from any thread, also while another waits.
   */
  public void abort() {
    synchronized (abortGuard) {
      if (comm != 0 && handle != 0) {
        CommNative.comm_abort(comm);
      }
    }
  }

  /**
   * Give up the making if it still runs (as {@link #abort()}) and release
   * it. A communicator it made stays open: it belongs to its owner.
   * Idempotent; {@link #await()} then reports what the making came to
   * ({@link CommAbortedException} when close gave it up).
   */
  @Override
  public void close() {
    abort();
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        try {
          CommNative.comm_handle_wait(handle, CommNative.comm_java_timeout_default());
        } catch (RuntimeException aborted) {
          failure = aborted;
        }
        release(failure);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return "Pending(" + call + ")";
  }

  private T waitFor(long timeoutMs) {
    RuntimeException error;
    lock.readLock().lock();
    try {
      if (handle == 0) {
        return outcome();
      }
      error = Handle.waitNative(handle, timeoutMs);
    } finally {
      lock.readLock().unlock();
    }
    return settle(error);
  }

  /** Record the outcome a caller saw (the first one wins) and report it. */
  private T settle(RuntimeException error) {
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        release(error);
      }
      return outcome();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Free the handle, and wrap what was made or free what was not; lock held exclusively. */
  private void release(RuntimeException error) {
    CommNative.comm_handle_destroy(handle);
    handle = 0;
    long target;
    synchronized (abortGuard) {
      target = comm;
      comm = 0;
    }
    failure = error;
    if (target != 0) {
      if (error == null) {
        try {
          made = Communicator.made(target, owner);
        } catch (RuntimeException queryFailed) {
          failure = queryFailed;
        }
      } else {
        CommNative.comm_destroy(target);
      }
    }
    if (owner != null) {
      owner.forget(this);
    }
  }

  private T outcome() {
    if (failure != null) {
      throw failure;
    }
    return result.apply(made);
  }
}
