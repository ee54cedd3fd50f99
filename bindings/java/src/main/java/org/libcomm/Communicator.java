package org.libcomm;

import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A group of ranks that communicate: the world ({@link #init()}) or a group
 * made from it ({@link #split}, {@link #createGroup}). Ranks given to and
 * returned by its methods are ranks of this communicator, as in the C API;
 * {@link #toWorldRank} and {@link #fromWorldRank} translate.
 *
 * <p>Every collective must be called by every rank of the communicator, in
 * the same order, with matching arguments. Each call has a blocking form and
 * an {@code ...Async} form that returns a {@link Handle} at once; the
 * tensors of an async call must not be touched until its handle completes.
 * Tensor arguments are read and written in place ({@link Tensor} wraps
 * direct buffers); the {@code float[]}, {@code double[]}, {@code int[]},
 * {@code long[]} and {@code byte[]} overloads copy through a temporary
 * direct buffer.
 *
 * <p>Methods may be called from several threads; calls that communicate are
 * then ordered by who gets there first, which must be the same on every rank.
 * {@link #close()} waits for calls in progress. Using a closed communicator
 * throws an {@link IllegalStateException} ({@link CommInvalidUsageException});
 * a bad argument, whether Java or the C library sees it, an
 * {@link IllegalArgumentException} ({@link CommInvalidArgumentException}
 * from C); a null tensor or array a {@link NullPointerException}.
 */
public final class Communicator implements AutoCloseable {
  /** Passed as {@code color} to {@link #split} by ranks that join no group. */
  public static final int UNDEFINED = CommNative.comm_java_undefined();
  /** The largest tag; tags are 0..TAG_MAX. */
  public static final int TAG_MAX = CommNative.comm_java_tag_max();

  private final long comm;
  private final Communicator parent;
  private final int rank;
  private final int size;
  private final int localRank;
  private final int localSize;
  private final String name;
  // Held (shared) by every native call on comm, exclusively by close().
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  // abort() skips the lock, so as not to queue behind a waiting close(); this
  // monitor keeps it off a communicator being destroyed.
  private final Object abortGuard = new Object();
  private volatile boolean closed;
  private final Set<Handle> handles = ConcurrentHashMap.newKeySet();
  private final Set<Communicator> children = ConcurrentHashMap.newKeySet();
  // Communicators being made that will be children (Pending).
  private final Set<Pending<?>> makings = ConcurrentHashMap.newKeySet();

  private Communicator(long comm, Communicator parent) {
    this.comm = comm;
    this.parent = parent;
    int[] out = new int[1];
    CommNative.comm_rank(out, comm);
    rank = out[0];
    CommNative.comm_size(out, comm);
    size = out[0];
    CommNative.comm_local_rank(out, comm);
    localRank = out[0];
    CommNative.comm_local_size(out, comm);
    localSize = out[0];
    byte[][] text = new byte[1][];
    CommNative.comm_name(text, comm);
    name = new String(text[0], StandardCharsets.UTF_8);
  }

  // --- joining and leaving ---------------------------------------------------

  /**
   * Join the world: every rank calls it once, under commrun (or torchrun,
   * msrun, srun, mpirun), and waits for the others up to the configured
   * timeout. Settings come from the {@code COMM_*} environment.
   */
  public static Communicator init() {
    return init(Map.of());
  }

  /**
   * Join the world with {@code settings} overriding the environment: keys
   * are those of {@code comm_config_set} ("timeout", "provider", "shm",
   * "log_level", ...; see {@code comm-info}). With "join" = "1" this process
   * joins a running job as a newcomer instead, and gets its part of the
   * communicator the job's ranks make with {@link #grow(int)}.
   */
  public static Communicator init(Map<String, String> settings) {
    long[] out = new long[1];
    withConfig("Communicator.init", settings, config -> CommNative.comm_init(out, config));
    return new Communicator(out[0], null);
  }

  /**
   * {@link #init()} without blocking: returns at once, and the
   * {@link Pending}'s {@code await()} gives the world once every rank has
   * joined; its {@code abort()} gives up joining.
   */
  public static Pending<Communicator> initAsync() {
    return initAsync(Map.of());
  }

  /** {@link #initAsync()} with {@code settings} overriding the environment, as {@link #init(Map)}. */
  public static Pending<Communicator> initAsync(Map<String, String> settings) {
    long[] out = new long[1];
    long[] handle = new long[1];
    withConfig("Communicator.initAsync", settings, config -> CommNative.comm_init_async(out, config, handle));
    return new Pending<>(null, "Communicator.initAsync", out[0], handle[0], Function.identity());
  }

  /** Run {@code body} with a C configuration of {@code settings}. */
  private static void withConfig(String call, Map<String, String> settings, LongConsumer body) {
    Objects.requireNonNull(settings, "settings");
    long[] out = new long[1];
    CommNative.comm_config_create(out);
    long config = out[0];
    try {
      for (Map.Entry<String, String> setting : settings.entrySet()) {
        CommNative.comm_config_set(config, utf8(call, "a setting's key", setting.getKey()),
            utf8(call, "a setting's value", setting.getValue()));
      }
      body.accept(config);
    } finally {
      CommNative.comm_config_destroy(config);
    }
  }

  /** The version of the loaded C library, "MAJOR.MINOR.PATCH". */
  public static String version() {
    return CommNative.comm_version_string();
  }

  /**
   * Leave: give up the communicators still being made from this one (for
   * the world, also those shrunk or grown from its groups), close the groups
   * made from it, then its handles (each waits for its operation), then the
   * communicator itself once calls in progress on other threads have
   * returned. Not collective. Idempotent.
   */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      for (Pending<?> making : new ArrayList<>(makings)) {
        making.close(); // before the children are listed: a making that completed is one
      }
      for (Communicator child : new ArrayList<>(children)) {
        child.close();
      }
      for (Handle handle : new ArrayList<>(handles)) {
        handle.close();
      }
      synchronized (abortGuard) {
        closed = true;
        CommNative.comm_destroy(comm);
      }
    } finally {
      lock.writeLock().unlock();
    }
    if (parent != null) {
      parent.children.remove(this);
    }
  }

  /**
   * Make every pending and future wait on this communicator fail with
   * {@link CommAbortedException} (on every group too, for the world).
   * Callable from any thread, also while another waits; the communicator
   * must still be closed.
   */
  public void abort() {
    synchronized (abortGuard) {
      ensureOpen("Communicator.abort");
      CommNative.comm_abort(comm);
    }
  }

  /**
   * Make every pending and future operation on this communicator fail with
   * {@link CommRevokedException}, on this rank and on every other live
   * member (the C library passes the news on; one rank calling it is
   * enough). Callable from any thread; the communicator must still be
   * closed.
   */
  public void revoke() {
    synchronized (abortGuard) {
      ensureOpen("Communicator.revoke");
      CommNative.comm_revoke(comm);
    }
  }

  public boolean isClosed() {
    return closed;
  }

  // --- after a failure -----------------------------------------------------------

  /**
   * The world rank of the first failed rank this rank knows of, or -1: the
   * rank whose end made an operation on this communicator or another of its
   * world fail with {@link CommRemoteException}, as this rank saw it or as
   * commrun or another rank reported it. Not collective.
   */
  public int failedRank() {
    int[] out = new int[1];
    invoke("Communicator.failedRank", null, false, handle -> CommNative.comm_failed_rank(out, comm));
    return out[0];
  }

  /**
   * The ranks of this communicator this rank knows to have failed, ascending.
   * What this rank knows, not an agreement: {@link #agree} and
   * {@link #shrink} give every live rank the same set. Not collective.
   */
  public int[] failedRanks() {
    int[] count = new int[1];
    int[] ranks = new int[size];
    invoke("Communicator.failedRanks", null, false, handle -> CommNative.comm_failed_ranks(count, ranks, comm));
    return Arrays.copyOf(ranks, Math.min(count[0], ranks.length));
  }

  /**
   * Fault-tolerant agreement: every live rank calls it with its
   * {@code flags}, and each gets the same {@link Agreement}: the bitwise AND
   * of the flags of the ranks that took part, and the ranks that did not
   * (the others proved them dead). It holds when ranks die during the call.
   * Use it to decide together whether a step committed.
   *
   * @throws CommRevokedException on a revoked communicator: shrink it, then agree on the new one
   * @throws CommRemoteException when the others found this rank failed and agreed without it
   */
  public Agreement agree(int flags) {
    int[] value = {flags};
    int[] count = new int[1];
    int[] failed = new int[size];
    invoke("Communicator.agree", null, false, handle -> CommNative.comm_agree(value, count, failed, comm));
    return new Agreement(value[0], Arrays.copyOf(failed, Math.min(count[0], failed.length)));
  }

  /**
   * Shrink: the live ranks agree on which ranks failed (as {@link #agree})
   * and make a communicator of the others, renumbered in their order here.
   * Every live rank calls it; it needs nothing from a dead rank. This
   * communicator may be revoked (the usual way: revoke, then shrink) and is
   * left as it was: close it after. With no failure the new communicator
   * has every rank. It belongs to the world (which must outlive it): closing
   * the world closes it, closing this communicator does not.
   */
  public Communicator shrink() {
    return shrink(null);
  }

  /** {@link #shrink()} naming the new communicator ({@code null}: this one's name + "-shrunk"). */
  public Communicator shrink(String name) {
    String call = "Communicator.shrink";
    byte[] encoded = utf8(call, "name", name);
    long[] out = new long[1];
    Communicator world = world();
    // Taken before this communicator's, as the world's close() takes them:
    // the world cannot close between the shrink and the adoption.
    world.lock.readLock().lock();
    try {
      return adopt(call, handle -> CommNative.comm_shrink(out, comm, encoded), out, world);
    } finally {
      world.lock.readLock().unlock();
    }
  }

  /**
   * {@link #shrink()} without blocking: the {@link Pending}'s
   * {@code await()} gives the new communicator, which belongs to the world
   * as {@link #shrink()}'s does. Operations on this communicator may run
   * meanwhile, but making another from it throws
   * {@link CommInvalidUsageException}: await the first.
   */
  public Pending<Communicator> shrinkAsync() {
    return shrinkAsync(null);
  }

  /** {@link #shrinkAsync()} naming the new communicator ({@code null}: this one's name + "-shrunk"). */
  public Pending<Communicator> shrinkAsync(String name) {
    String call = "Communicator.shrinkAsync";
    byte[] encoded = utf8(call, "name", name);
    Communicator world = world();
    // Taken before this communicator's, as the world's close() takes them.
    world.lock.readLock().lock();
    try {
      return startMaking(call, world, Function.identity(),
          (out, handle) -> CommNative.comm_shrink_async(out, comm, encoded, handle));
    } finally {
      world.lock.readLock().unlock();
    }
  }

  /**
   * Grow: the ranks of this communicator take in {@code count} newcomers,
   * processes started later whose {@link #init(Map)} runs with the setting
   * "join" = "1" (or {@code COMM_JOIN=1}; {@code commrun --replace} starts its
   * replacements so), and make a communicator of them all: this one's ranks
   * keep their ranks, the newcomers get the next ones, in the order they
   * came, and each newcomer's {@code init} returns its part. Every rank calls
   * it with the same {@code count} (1..65535). State transfer is the
   * caller's (a broadcast from a rank of this communicator). The new
   * communicator is a world of its own ({@link #toWorldRank} gives its own
   * ranks); in Java it belongs to this one's world, as {@link #shrink()}'s
   * does: closing the world closes it, closing this communicator does not.
   * This communicator must have no failed rank (shrink it first) and goes on
   * working. Waits at most the timeout for the newcomers.
   *
   * @throws CommInvalidArgumentException for a count outside 1..65535, or counts that differ among the ranks
   * @throws CommTimeoutException when the newcomers did not come in time
   * @throws CommRemoteException when a rank has failed, or one died while the communicator was made
   * @throws CommRevokedException on a revoked communicator
   */
  public Communicator grow(int count) {
    return grow(count, null);
  }

  /** {@link #grow(int)} naming the new communicator ({@code null}: this one's name + "-grown"). */
  public Communicator grow(int count, String name) {
    String call = "Communicator.grow";
    byte[] encoded = utf8(call, "name", name);
    long[] out = new long[1];
    Communicator world = world();
    // Taken before this communicator's, as the world's close() takes them:
    // the world cannot close between the grow and the adoption.
    world.lock.readLock().lock();
    try {
      return adopt(call, handle -> CommNative.comm_grow(out, comm, count, encoded), out, world);
    } finally {
      world.lock.readLock().unlock();
    }
  }

  /**
   * {@link #grow(int)} without blocking: the {@link Pending}'s
   * {@code await()} gives the new communicator, which belongs to the world
   * as {@link #grow(int)}'s does; the newcomers may start after this
   * returns. Operations on this communicator may run meanwhile, but making
   * another from it throws {@link CommInvalidUsageException}: await the
   * first.
   */
  public Pending<Communicator> growAsync(int count) {
    return growAsync(count, null);
  }

  /** {@link #growAsync(int)} naming the new communicator ({@code null}: this one's name + "-grown"). */
  public Pending<Communicator> growAsync(int count, String name) {
    String call = "Communicator.growAsync";
    byte[] encoded = utf8(call, "name", name);
    Communicator world = world();
    // Taken before this communicator's, as the world's close() takes them.
    world.lock.readLock().lock();
    try {
      return startMaking(call, world, Function.identity(),
          (out, handle) -> CommNative.comm_grow_async(out, comm, count, encoded, handle));
    } finally {
      world.lock.readLock().unlock();
    }
  }

  private Communicator world() {
    Communicator world = this;
    while (world.parent != null) {
      world = world.parent;
    }
    return world;
  }

  // --- queries -----------------------------------------------------------------

  public int rank() {
    ensureOpen("Communicator.rank");
    return rank;
  }

  public int size() {
    ensureOpen("Communicator.size");
    return size;
  }

  /** This rank's rank among the ranks of this communicator on its node. */
  public int localRank() {
    ensureOpen("Communicator.localRank");
    return localRank;
  }

  /** The number of ranks of this communicator on this node. */
  public int localSize() {
    ensureOpen("Communicator.localSize");
    return localSize;
  }

  /** The number of nodes (hosts) this communicator's ranks are on. */
  public int nodeCount() {
    int[] out = new int[1];
    invoke("Communicator.nodeCount", null, false, handle -> CommNative.comm_node_count(out, comm));
    return out[0];
  }

  /**
   * This rank's node, 0 .. {@link #nodeCount()} - 1; nodes are numbered in
   * the order of their lowest rank.
   */
  public int nodeId() {
    int[] out = new int[1];
    invoke("Communicator.nodeId", null, false, handle -> CommNative.comm_node_id(out, comm));
    return out[0];
  }

  /** "world" for the world; a group's given or generated name. */
  public String name() {
    ensureOpen("Communicator.name");
    return name;
  }

  /** The world rank of rank {@code rank} of this communicator. */
  public int toWorldRank(int rank) {
    int[] out = new int[1];
    invoke("Communicator.toWorldRank", null, false, handle -> CommNative.comm_rank_to_world(out, comm, rank));
    return out[0];
  }

  /** The rank in this communicator of world rank {@code worldRank}, or -1 when it is not a member. */
  public int fromWorldRank(int worldRank) {
    int[] out = new int[1];
    invoke("Communicator.fromWorldRank", null, false,
        handle -> CommNative.comm_rank_from_world(out, comm, worldRank));
    return out[0];
  }

  /** The deadline of every wait on this communicator. */
  public Duration timeout() {
    long[] out = new long[1];
    invoke("Communicator.timeout", null, false, handle -> CommNative.comm_timeout(out, comm));
    return Duration.ofMillis(out[0]);
  }

  /** Set the deadline of every wait on this communicator (at least a millisecond). */
  public void setTimeout(Duration timeout) {
    long millis = Handle.millis(timeout);
    if (millis <= 0) {
      throw new IllegalArgumentException("Communicator.setTimeout: " + timeout + " is not a positive number of ms");
    }
    invoke("Communicator.setTimeout", null, false, handle -> CommNative.comm_set_timeout(comm, millis));
  }

  /**
   * Order this communicator's collectives on CUDA tensors on {@code stream}
   * (a cudaStream_t's address; 0 for none): they return at once, start after
   * the work already on the stream, and later work on it sees their result
   * (docs/cuda.md). Not collective.
   *
   * @throws IllegalArgumentException for a stream the CUDA runtime does not know
   * @throws CommException with status NOT_SUPPORTED where comm has no CUDA or no device is visible
   */
  public void setStream(long stream) {
    invoke("Communicator.setStream", null, false, handle -> CommNative.comm_set_stream(comm, stream));
  }

  @Override
  public String toString() {
    return "Communicator(" + name + ", rank " + rank + " of " + size + (closed ? ", closed)" : ")");
  }

  // --- groups ------------------------------------------------------------------

  /**
   * Split: ranks passing the same {@code color} (>= 0) form a communicator,
   * ordered by {@code key} then by rank here. Every rank calls it; ranks
   * passing {@link #UNDEFINED} join none and get an empty Optional.
   * Closing this communicator closes the new one.
   */
  public Optional<Communicator> split(int color, int key) {
    return split(color, key, null);
  }

  /** {@link #split(int, int)} naming the new communicator ({@code null}: generated). */
  public Optional<Communicator> split(int color, int key, String name) {
    String call = "Communicator.split";
    checkColor(call, color);
    byte[] encoded = utf8(call, "name", name);
    long[] out = new long[1];
    return Optional.ofNullable(
        adopt(call, handle -> CommNative.comm_split(out, comm, color, key, encoded), out));
  }

  /**
   * {@link #split(int, int)} without blocking: the {@link Pending}'s
   * {@code await()} gives the new communicator (empty for
   * {@link #UNDEFINED}). Operations on this communicator may run meanwhile,
   * but making another from it throws {@link CommInvalidUsageException}:
   * await the first.
   */
  public Pending<Optional<Communicator>> splitAsync(int color, int key) {
    return splitAsync(color, key, null);
  }

  /** {@link #splitAsync(int, int)} naming the new communicator ({@code null}: generated). */
  public Pending<Optional<Communicator>> splitAsync(int color, int key, String name) {
    String call = "Communicator.splitAsync";
    checkColor(call, color);
    byte[] encoded = utf8(call, "name", name);
    return startMaking(call, this, Optional::ofNullable,
        (out, handle) -> CommNative.comm_split_async(out, comm, color, key, encoded, handle));
  }

  private static void checkColor(String call, int color) {
    if (color < 0 && color != UNDEFINED) {
      throw new IllegalArgumentException(call + ": color " + color + " is negative and not UNDEFINED");
    }
  }

  /**
   * The ranks of this communicator on this rank's node, in this
   * communicator's rank order. Every rank calls it; each gets its own
   * node's. Closing this communicator closes the new one.
   */
  public Communicator splitByNode() {
    return splitByNode(null);
  }

  /** {@link #splitByNode()} naming the new communicator ({@code null}: generated). */
  public Communicator splitByNode(String name) {
    String call = "Communicator.splitByNode";
    byte[] encoded = utf8(call, "name", name);
    long[] out = new long[1];
    return adopt(call, handle -> CommNative.comm_split_by_node(out, comm, encoded), out);
  }

  /**
   * A communicator of this communicator's ranks {@code ranks} (distinct; the
   * new rank i is ranks[i]). Called by those ranks only, all with the same
   * list. Closing this communicator closes the new one.
   */
  public Communicator createGroup(int[] ranks) {
    return createGroup(ranks, null);
  }

  /** {@link #createGroup(int[])} naming the new communicator ({@code null}: generated). */
  public Communicator createGroup(int[] ranks, String name) {
    String call = "Communicator.createGroup";
    int[] members = checkMembers(call, ranks);
    byte[] encoded = utf8(call, "name", name);
    long[] out = new long[1];
    return adopt(call, handle -> CommNative.comm_group_create(out, comm, members, encoded), out);
  }

  /**
   * {@link #createGroup(int[])} without blocking: the {@link Pending}'s
   * {@code await()} gives the new communicator. Collectives on this
   * communicator may run meanwhile, but making another from it throws
   * {@link CommInvalidUsageException}: await the first.
   */
  public Pending<Communicator> createGroupAsync(int[] ranks) {
    return createGroupAsync(ranks, null);
  }

  /** {@link #createGroupAsync(int[])} naming the new communicator ({@code null}: generated). */
  public Pending<Communicator> createGroupAsync(int[] ranks, String name) {
    String call = "Communicator.createGroupAsync";
    int[] members = checkMembers(call, ranks);
    byte[] encoded = utf8(call, "name", name);
    return startMaking(call, this, Function.identity(),
        (out, handle) -> CommNative.comm_group_create_async(out, comm, members, encoded, handle));
  }

  private int[] checkMembers(String call, int[] ranks) {
    int[] members = Objects.requireNonNull(ranks, "ranks").clone();
    for (int member : members) {
      checkRank(call, "ranks", member);
    }
    return members;
  }

  // --- collectives ---------------------------------------------------------------

  /** Return once every rank has called barrier. */
  public void barrier() {
    barrier(false);
  }

  public Handle barrierAsync() {
    return barrier(true);
  }

  /** {@code out} = {@code op} over {@code in} of every rank; {@code out} may be {@code in}. */
  public void allReduce(Tensor in, Tensor out, ReduceOp op) {
    allReduce(in, out, op, false);
  }

  /** {@code op} over {@code data} of every rank, in place. */
  public void allReduce(Tensor data, ReduceOp op) {
    allReduce(data, data, op, false);
  }

  public Handle allReduceAsync(Tensor in, Tensor out, ReduceOp op) {
    return allReduce(in, out, op, true);
  }

  public Handle allReduceAsync(Tensor data, ReduceOp op) {
    return allReduce(data, data, op, true);
  }

  /** Like allReduce, but only {@code root} gets the result; {@code out} may be null elsewhere. */
  public void reduce(Tensor in, Tensor out, ReduceOp op, int root) {
    reduce(in, out, op, root, false);
  }

  public Handle reduceAsync(Tensor in, Tensor out, ReduceOp op, int root) {
    return reduce(in, out, op, root, true);
  }

  /**
   * Copy {@code in} of {@code root} into {@code out} of every rank. {@code in}
   * is read on the root only (may be null elsewhere); on the root {@code out}
   * may be {@code in} or null.
   */
  public void broadcast(Tensor in, Tensor out, int root) {
    broadcast(in, out, root, false);
  }

  /** {@code data} of {@code root} into {@code data} of every rank. */
  public void broadcast(Tensor data, int root) {
    broadcast(data, data, root, false);
  }

  public Handle broadcastAsync(Tensor in, Tensor out, int root) {
    return broadcast(in, out, root, true);
  }

  public Handle broadcastAsync(Tensor data, int root) {
    return broadcast(data, data, root, true);
  }

  /** {@code in} of every rank concatenated along dimension 0 in rank order into {@code out} (size x in's rows). */
  public void allGather(Tensor in, Tensor out) {
    allGather(in, out, false);
  }

  public Handle allGatherAsync(Tensor in, Tensor out) {
    return allGather(in, out, true);
  }

  /** Uneven allGather: rank r contributes {@code counts[r]} rows; {@code out} has sum(counts) rows. */
  public void allGatherV(Tensor in, Tensor out, long[] counts) {
    allGatherV(in, out, counts, false);
  }

  public Handle allGatherVAsync(Tensor in, Tensor out, long[] counts) {
    return allGatherV(in, out, counts, true);
  }

  /**
   * {@code op} over {@code in} (size x out's rows) of every rank; rank r gets
   * the r-th of size equal dimension-0 blocks in {@code out}.
   */
  public void reduceScatter(Tensor in, Tensor out, ReduceOp op) {
    reduceScatter(in, out, op, false);
  }

  public Handle reduceScatterAsync(Tensor in, Tensor out, ReduceOp op) {
    return reduceScatter(in, out, op, true);
  }

  /** Uneven reduceScatter: {@code in} has sum(counts) rows; rank r gets {@code counts[r]} rows. */
  public void reduceScatterV(Tensor in, Tensor out, long[] counts, ReduceOp op) {
    reduceScatterV(in, out, counts, op, false);
  }

  public Handle reduceScatterVAsync(Tensor in, Tensor out, long[] counts, ReduceOp op) {
    return reduceScatterV(in, out, counts, op, true);
  }

  /** {@code in} of every rank concatenated along dimension 0 into {@code out} on {@code root} (null elsewhere). */
  public void gather(Tensor in, Tensor out, int root) {
    gather(in, out, root, false);
  }

  public Handle gatherAsync(Tensor in, Tensor out, int root) {
    return gather(in, out, root, true);
  }

  /** Uneven gather: rank r contributes {@code counts[r]} rows to {@code out} on {@code root}. */
  public void gatherV(Tensor in, Tensor out, long[] counts, int root) {
    gatherV(in, out, counts, root, false);
  }

  public Handle gatherVAsync(Tensor in, Tensor out, long[] counts, int root) {
    return gatherV(in, out, counts, root, true);
  }

  /** Split {@code in} on {@code root} (null elsewhere) into size equal dimension-0 blocks; rank r gets block r. */
  public void scatter(Tensor in, Tensor out, int root) {
    scatter(in, out, root, false);
  }

  public Handle scatterAsync(Tensor in, Tensor out, int root) {
    return scatter(in, out, root, true);
  }

  /** Uneven scatter: rank r receives {@code counts[r]} rows of {@code in} on {@code root}. */
  public void scatterV(Tensor in, Tensor out, long[] counts, int root) {
    scatterV(in, out, counts, root, false);
  }

  public Handle scatterVAsync(Tensor in, Tensor out, long[] counts, int root) {
    return scatterV(in, out, counts, root, true);
  }

  /**
   * Send rows [sum(inSplits[0..p)), +inSplits[p]) of {@code in} to rank p and
   * receive rank p's rows into rows [sum(outSplits[0..p)), +outSplits[p]) of
   * {@code out}. A null split array means dimension 0 divided evenly.
   */
  public void allToAllSingle(Tensor in, Tensor out, long[] outSplits, long[] inSplits) {
    allToAllSingle(in, out, outSplits, inSplits, false);
  }

  /** allToAllSingle with even splits. */
  public void allToAllSingle(Tensor in, Tensor out) {
    allToAllSingle(in, out, null, null, false);
  }

  public Handle allToAllSingleAsync(Tensor in, Tensor out, long[] outSplits, long[] inSplits) {
    return allToAllSingle(in, out, outSplits, inSplits, true);
  }

  /** Send {@code ins[p]} to rank p and receive {@code outs[p]} from rank p (size tensors each, one dtype). */
  public void allToAll(Tensor[] ins, Tensor[] outs) {
    allToAll(ins, outs, false);
  }

  public Handle allToAllAsync(Tensor[] ins, Tensor[] outs) {
    return allToAll(ins, outs, true);
  }

  // --- point-to-point --------------------------------------------------------------

  /** Send {@code data} to rank {@code peer} with {@code tag}; same-tag messages between two ranks arrive in order. */
  public void send(Tensor data, int peer, int tag) {
    send(data, peer, tag, false);
  }

  public void send(Tensor data, int peer) {
    send(data, peer, 0, false);
  }

  public Handle sendAsync(Tensor data, int peer, int tag) {
    return send(data, peer, tag, true);
  }

  /** Receive into {@code data} from rank {@code peer} a message of exactly its byte size with {@code tag}. */
  public void recv(Tensor data, int peer, int tag) {
    recv(data, peer, tag, false);
  }

  public void recv(Tensor data, int peer) {
    recv(data, peer, 0, false);
  }

  public Handle recvAsync(Tensor data, int peer, int tag) {
    return recv(data, peer, tag, true);
  }

  /**
   * Run the sends and receives of {@code batch} together: they complete
   * without deadlock whatever their order and the order of other ranks'
   * batches.
   */
  public void batch(Batch batch) {
    batch(batch, false);
  }

  public Handle batchAsync(Batch batch) {
    return batch(batch, true);
  }

  // --- arrays (copied through a direct buffer; blocking) ------------------------------

  /** {@code op} over {@code data} of every rank, in place. */
  public void allReduce(float[] data, ReduceOp op) {
    allReduceArray(data, op);
  }

  public void allReduce(double[] data, ReduceOp op) {
    allReduceArray(data, op);
  }

  public void allReduce(int[] data, ReduceOp op) {
    allReduceArray(data, op);
  }

  public void allReduce(long[] data, ReduceOp op) {
    allReduceArray(data, op);
  }

  public void allReduce(byte[] data, ReduceOp op) {
    allReduceArray(data, op);
  }

  /** {@code op} over {@code data} of every rank, into {@code data} on {@code root} (unchanged elsewhere). */
  public void reduce(float[] data, ReduceOp op, int root) {
    reduceArray(data, op, root);
  }

  public void reduce(double[] data, ReduceOp op, int root) {
    reduceArray(data, op, root);
  }

  public void reduce(int[] data, ReduceOp op, int root) {
    reduceArray(data, op, root);
  }

  public void reduce(long[] data, ReduceOp op, int root) {
    reduceArray(data, op, root);
  }

  public void reduce(byte[] data, ReduceOp op, int root) {
    reduceArray(data, op, root);
  }

  /** {@code data} of {@code root} into {@code data} of every rank. */
  public void broadcast(float[] data, int root) {
    broadcastArray(data, root);
  }

  public void broadcast(double[] data, int root) {
    broadcastArray(data, root);
  }

  public void broadcast(int[] data, int root) {
    broadcastArray(data, root);
  }

  public void broadcast(long[] data, int root) {
    broadcastArray(data, root);
  }

  public void broadcast(byte[] data, int root) {
    broadcastArray(data, root);
  }

  /** {@code in} of every rank concatenated in rank order (every rank passes as many elements). */
  public float[] allGather(float[] in) {
    return allGatherArray(Tensor.copyOf(in)).toFloatArray();
  }

  public double[] allGather(double[] in) {
    return allGatherArray(Tensor.copyOf(in)).toDoubleArray();
  }

  public int[] allGather(int[] in) {
    return allGatherArray(Tensor.copyOf(in)).toIntArray();
  }

  public long[] allGather(long[] in) {
    return allGatherArray(Tensor.copyOf(in)).toLongArray();
  }

  public byte[] allGather(byte[] in) {
    return allGatherArray(Tensor.copyOf(in)).toByteArray();
  }

  /** {@code op} over {@code in} of every rank; rank r gets the r-th of size equal blocks. */
  public float[] reduceScatter(float[] in, ReduceOp op) {
    return reduceScatterArray(Tensor.copyOf(in), op).toFloatArray();
  }

  public double[] reduceScatter(double[] in, ReduceOp op) {
    return reduceScatterArray(Tensor.copyOf(in), op).toDoubleArray();
  }

  public int[] reduceScatter(int[] in, ReduceOp op) {
    return reduceScatterArray(Tensor.copyOf(in), op).toIntArray();
  }

  public long[] reduceScatter(long[] in, ReduceOp op) {
    return reduceScatterArray(Tensor.copyOf(in), op).toLongArray();
  }

  public byte[] reduceScatter(byte[] in, ReduceOp op) {
    return reduceScatterArray(Tensor.copyOf(in), op).toByteArray();
  }

  /** Send {@code data} to rank {@code peer} with {@code tag}. */
  public void send(float[] data, int peer, int tag) {
    send(Tensor.copyOf(data), peer, tag, false);
  }

  public void send(double[] data, int peer, int tag) {
    send(Tensor.copyOf(data), peer, tag, false);
  }

  public void send(int[] data, int peer, int tag) {
    send(Tensor.copyOf(data), peer, tag, false);
  }

  public void send(long[] data, int peer, int tag) {
    send(Tensor.copyOf(data), peer, tag, false);
  }

  public void send(byte[] data, int peer, int tag) {
    send(Tensor.copyOf(data), peer, tag, false);
  }

  /** Receive into {@code data} from rank {@code peer} a message of exactly its size with {@code tag}. */
  public void recv(float[] data, int peer, int tag) {
    recvArray(data, peer, tag);
  }

  public void recv(double[] data, int peer, int tag) {
    recvArray(data, peer, tag);
  }

  public void recv(int[] data, int peer, int tag) {
    recvArray(data, peer, tag);
  }

  public void recv(long[] data, int peer, int tag) {
    recvArray(data, peer, tag);
  }

  public void recv(byte[] data, int peer, int tag) {
    recvArray(data, peer, tag);
  }

  // --- implementation -------------------------------------------------------------

  /** One native call; {@code handle} is null (blocking) or a long[1] that receives the handle. */
  @FunctionalInterface
  private interface NativeCall {
    void run(long[] handle);
  }

  /**
   * Run {@code body} under the shared lock; for an async call, return the
   * Handle that keeps {@code keep} (the call's tensors) alive until done.
   */
  private Handle invoke(String call, Object keep, boolean async, NativeCall body) {
    lock.readLock().lock();
    try {
      ensureOpen(call);
      long[] out = async ? new long[1] : null;
      body.run(out);
      if (!async) {
        return null;
      }
      Handle handle = new Handle(this, call, out[0], keep);
      handles.add(handle);
      return handle;
    } finally {
      lock.readLock().unlock();
      // The tensors, and so their buffers and descriptors, outlive the call.
      Reference.reachabilityFence(keep);
    }
  }

  /** Run a call that makes a communicator into out[0]; wrap it (null for none) as a child of this one. */
  private Communicator adopt(String call, NativeCall body, long[] out) {
    return adopt(call, body, out, this);
  }

  /** {@link #adopt(String, NativeCall, long[])} with the new communicator a child of {@code owner}. */
  private Communicator adopt(String call, NativeCall body, long[] out, Communicator owner) {
    lock.readLock().lock();
    try {
      ensureOpen(call);
      body.run(null);
      if (out[0] == 0) {
        return null;
      }
      return made(out[0], owner);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** One native call that starts making a communicator into out[0], its handle into handle[0]. */
  @FunctionalInterface
  private interface MakingCall {
    void run(long[] out, long[] handle);
  }

  /** Start {@code body} under the shared lock; its {@link Pending} belongs to {@code owner}. */
  private <T> Pending<T> startMaking(String call, Communicator owner, Function<Communicator, T> result,
      MakingCall body) {
    lock.readLock().lock();
    try {
      ensureOpen(call);
      long[] out = new long[1];
      long[] handle = new long[1];
      body.run(out, handle);
      Pending<T> making = new Pending<>(owner, call, out[0], handle[0], result);
      owner.makings.add(making);
      return making;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Wrap {@code made}, which a {@link Pending} made, as a child of
   * {@code owner} (null: the caller's, for initAsync); free it when its
   * queries fail.
   */
  static Communicator made(long made, Communicator owner) {
    Communicator child;
    try {
      child = new Communicator(made, owner);
    } catch (RuntimeException queryFailed) {
      CommNative.comm_destroy(made);
      throw queryFailed;
    }
    if (owner != null) {
      owner.children.add(child);
    }
    return child;
  }

  void forget(Handle handle) {
    handles.remove(handle);
  }

  void forget(Pending<?> making) {
    makings.remove(making);
  }

  private Handle barrier(boolean async) {
    return invoke("Communicator.barrier", null, async, handle -> CommNative.comm_barrier(comm, handle));
  }

  private Handle allReduce(Tensor in, Tensor out, ReduceOp op, boolean async) {
    String call = "Communicator.allReduce";
    checkPair(call, in, out);
    checkNumel(call, "out", out, in.numel());
    int code = op.code();
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_all_reduce(comm, in.descriptor(), out.descriptor(), code, handle));
  }

  private Handle reduce(Tensor in, Tensor out, ReduceOp op, int root, boolean async) {
    String call = "Communicator.reduce";
    checkRank(call, "root", root);
    checkRootOutput(call, in, out, root, in.numel());
    int code = op.code();
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_reduce(comm, in.descriptor(), descriptor(out), code, root, handle));
  }

  private Handle broadcast(Tensor in, Tensor out, int root, boolean async) {
    String call = "Communicator.broadcast";
    checkRank(call, "root", root);
    if (rank == root) {
      Objects.requireNonNull(in, call + ": in is required on the root");
      if (out != null) {
        checkSameDtype(call, in, out);
        checkNumel(call, "out", out, in.numel());
      }
    } else {
      Objects.requireNonNull(out, call + ": out is required off the root");
    }
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_broadcast(comm, rank == root ? in.descriptor() : 0, descriptor(out), root, handle));
  }

  private Handle allGather(Tensor in, Tensor out, boolean async) {
    String call = "Communicator.allGather";
    checkPair(call, in, out);
    checkNumel(call, "out", out, in.numel() * size);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_all_gather(comm, in.descriptor(), out.descriptor(), handle));
  }

  private Handle allGatherV(Tensor in, Tensor out, long[] counts, boolean async) {
    String call = "Communicator.allGatherV";
    checkPair(call, in, out);
    long[] rows = checkCounts(call, "counts", counts);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_all_gather_v(comm, in.descriptor(), out.descriptor(), rows, handle));
  }

  private Handle reduceScatter(Tensor in, Tensor out, ReduceOp op, boolean async) {
    String call = "Communicator.reduceScatter";
    checkPair(call, in, out);
    checkNumel(call, "in", in, out.numel() * size);
    int code = op.code();
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_reduce_scatter(comm, in.descriptor(), out.descriptor(), code, handle));
  }

  private Handle reduceScatterV(Tensor in, Tensor out, long[] counts, ReduceOp op, boolean async) {
    String call = "Communicator.reduceScatterV";
    checkPair(call, in, out);
    long[] rows = checkCounts(call, "counts", counts);
    int code = op.code();
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_reduce_scatter_v(comm, in.descriptor(), out.descriptor(), rows, code, handle));
  }

  private Handle gather(Tensor in, Tensor out, int root, boolean async) {
    String call = "Communicator.gather";
    checkRank(call, "root", root);
    checkRootOutput(call, in, out, root, in.numel() * size);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_gather(comm, in.descriptor(), descriptor(out), root, handle));
  }

  private Handle gatherV(Tensor in, Tensor out, long[] counts, int root, boolean async) {
    String call = "Communicator.gatherV";
    checkRank(call, "root", root);
    Objects.requireNonNull(in, call + ": in");
    checkRootOutput(call, in, out, root, -1);
    long[] rows = checkCounts(call, "counts", counts);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_gather_v(comm, in.descriptor(), descriptor(out), rows, root, handle));
  }

  private Handle scatter(Tensor in, Tensor out, int root, boolean async) {
    String call = "Communicator.scatter";
    checkRank(call, "root", root);
    checkRootInput(call, in, out, root, out.numel() * size);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_scatter(comm, descriptor(in), out.descriptor(), root, handle));
  }

  private Handle scatterV(Tensor in, Tensor out, long[] counts, int root, boolean async) {
    String call = "Communicator.scatterV";
    checkRank(call, "root", root);
    Objects.requireNonNull(out, call + ": out");
    checkRootInput(call, in, out, root, -1);
    long[] rows = checkCounts(call, "counts", counts);
    return invoke(call, new Tensor[] {in, out}, async,
        handle -> CommNative.comm_scatter_v(comm, descriptor(in), out.descriptor(), rows, root, handle));
  }

  private Handle allToAllSingle(Tensor in, Tensor out, long[] outSplits, long[] inSplits, boolean async) {
    String call = "Communicator.allToAllSingle";
    checkPair(call, in, out);
    long[] outRows = outSplits == null ? null : checkCounts(call, "outSplits", outSplits);
    long[] inRows = inSplits == null ? null : checkCounts(call, "inSplits", inSplits);
    return invoke(call, new Tensor[] {in, out}, async, handle -> CommNative.comm_all_to_all_single(
        comm, in.descriptor(), out.descriptor(), outRows, inRows, handle));
  }

  private Handle allToAll(Tensor[] ins, Tensor[] outs, boolean async) {
    String call = "Communicator.allToAll";
    Tensor[] sends = checkTensorList(call, "ins", ins);
    Tensor[] receives = checkTensorList(call, "outs", outs);
    long[] sendDescriptors = new long[size];
    long[] receiveDescriptors = new long[size];
    for (int peer = 0; peer < size; ++peer) {
      checkSameDtype(call, sends[0], sends[peer]);
      checkSameDtype(call, sends[0], receives[peer]);
      sendDescriptors[peer] = sends[peer].descriptor();
      receiveDescriptors[peer] = receives[peer].descriptor();
    }
    return invoke(call, new Object[] {sends, receives}, async,
        handle -> CommNative.comm_all_to_all(comm, sendDescriptors, receiveDescriptors, handle));
  }

  private Handle send(Tensor data, int peer, int tag, boolean async) {
    String call = "Communicator.send";
    Objects.requireNonNull(data, call + ": data");
    checkRank(call, "peer", peer);
    checkTag(call, tag);
    return invoke(call, data, async, handle -> CommNative.comm_send(comm, data.descriptor(), peer, tag, handle));
  }

  private Handle recv(Tensor data, int peer, int tag, boolean async) {
    String call = "Communicator.recv";
    Objects.requireNonNull(data, call + ": data");
    checkRank(call, "peer", peer);
    checkTag(call, tag);
    return invoke(call, data, async, handle -> CommNative.comm_recv(comm, data.descriptor(), peer, tag, handle));
  }

  private Handle batch(Batch batch, boolean async) {
    String call = "Communicator.batch";
    List<Batch.Entry> entries = Objects.requireNonNull(batch, call + ": batch").entries();
    for (Batch.Entry entry : entries) {
      checkRank(call, "peer", entry.peer);
    }
    return invoke(call, entries, async, handle -> {
      long[] out = new long[1];
      CommNative.comm_batch_create(out);
      try {
        for (Batch.Entry entry : entries) {
          if (entry.isSend) {
            CommNative.comm_batch_add_send(out[0], entry.tensor.descriptor(), entry.peer, entry.tag);
          } else {
            CommNative.comm_batch_add_recv(out[0], entry.tensor.descriptor(), entry.peer, entry.tag);
          }
        }
        CommNative.comm_batch_start(comm, out[0], handle);
      } finally {
        CommNative.comm_batch_destroy(out[0]);
      }
    });
  }

  private void allReduceArray(Object data, ReduceOp op) {
    Tensor staged = ArrayStaging.copyIn(data);
    allReduce(staged, staged, op, false);
    ArrayStaging.copyOut(staged, data);
  }

  private void reduceArray(Object data, ReduceOp op, int root) {
    Tensor staged = ArrayStaging.copyIn(data);
    reduce(staged, staged, op, root, false);
    if (rank == root) {
      ArrayStaging.copyOut(staged, data);
    }
  }

  private void broadcastArray(Object data, int root) {
    Tensor staged = ArrayStaging.copyIn(data);
    broadcast(staged, staged, root, false);
    ArrayStaging.copyOut(staged, data);
  }

  private Tensor allGatherArray(Tensor in) {
    Tensor out = Tensor.allocate(in.dtype(), in.numel() * size);
    allGather(in, out, false);
    return out;
  }

  private Tensor reduceScatterArray(Tensor in, ReduceOp op) {
    if (in.numel() % size != 0) {
      throw new IllegalArgumentException("Communicator.reduceScatter: " + in.numel()
          + " elements do not divide into " + size + " equal blocks");
    }
    Tensor out = Tensor.allocate(in.dtype(), in.numel() / size);
    reduceScatter(in, out, op, false);
    return out;
  }

  private void recvArray(Object data, int peer, int tag) {
    Tensor staged = ArrayStaging.copyIn(data);
    recv(staged, peer, tag, false);
    ArrayStaging.copyOut(staged, data);
  }

  // --- checks --------------------------------------------------------------------

  private void ensureOpen(String call) {
    if (closed) {
      throw new CommInvalidUsageException(call + ": communicator '" + name + "' is closed");
    }
  }

  private void checkRank(String call, String what, int value) {
    if (value < 0 || value >= size) {
      throw new IllegalArgumentException(call + ": " + what + " " + value + " is not a rank of '" + name
          + "' (0.." + (size - 1) + ")");
    }
  }

  private static void checkTag(String call, int tag) {
    if (tag < 0) {
      throw new IllegalArgumentException(call + ": tag " + tag + " is outside 0..TAG_MAX");
    }
  }

  private static void checkPair(String call, Tensor in, Tensor out) {
    Objects.requireNonNull(in, call + ": in");
    Objects.requireNonNull(out, call + ": out");
    checkSameDtype(call, in, out);
  }

  private static void checkSameDtype(String call, Tensor a, Tensor b) {
    if (a.dtype() != b.dtype()) {
      throw new IllegalArgumentException(call + ": tensors of one call share a dtype, not " + a.dtype() + " and "
          + b.dtype());
    }
  }

  private static void checkNumel(String call, String what, Tensor tensor, long expected) {
    if (tensor.numel() != expected) {
      throw new IllegalArgumentException(call + ": " + what + " has " + tensor.numel() + " elements, not "
          + expected);
    }
  }

  /** The root's {@code out} is required and holds {@code expected} elements (any, when negative). */
  private void checkRootOutput(String call, Tensor in, Tensor out, int root, long expected) {
    Objects.requireNonNull(in, call + ": in");
    if (rank != root) {
      return;
    }
    Objects.requireNonNull(out, call + ": out is required on the root");
    checkSameDtype(call, in, out);
    if (expected >= 0) {
      checkNumel(call, "out", out, expected);
    }
  }

  /** The root's {@code in} is required and holds {@code expected} elements (any, when negative). */
  private void checkRootInput(String call, Tensor in, Tensor out, int root, long expected) {
    Objects.requireNonNull(out, call + ": out");
    if (rank != root) {
      return;
    }
    Objects.requireNonNull(in, call + ": in is required on the root");
    checkSameDtype(call, in, out);
    if (expected >= 0) {
      checkNumel(call, "in", in, expected);
    }
  }

  /** A copy of per-rank row counts: one per rank, none negative (C reads size entries). */
  private long[] checkCounts(String call, String what, long[] counts) {
    Objects.requireNonNull(counts, call + ": " + what);
    if (counts.length != size) {
      throw new IllegalArgumentException(call + ": " + what + " has " + counts.length + " entries but '" + name
          + "' has " + size + " ranks");
    }
    for (long count : counts) {
      if (count < 0) {
        throw new IllegalArgumentException(call + ": " + what + " " + Arrays.toString(counts)
            + " holds a negative count");
      }
    }
    return counts.clone();
  }

  private Tensor[] checkTensorList(String call, String what, Tensor[] tensors) {
    Objects.requireNonNull(tensors, call + ": " + what);
    if (tensors.length != size) {
      throw new IllegalArgumentException(call + ": " + what + " has " + tensors.length + " tensors but '" + name
          + "' has " + size + " ranks");
    }
    Tensor[] copy = tensors.clone();
    for (int i = 0; i < copy.length; ++i) {
      Objects.requireNonNull(copy[i], call + ": " + what + "[" + i + "]");
    }
    return copy;
  }

  private static long descriptor(Tensor tensor) {
    return tensor == null ? 0 : tensor.descriptor();
  }

  /** A string argument as UTF-8 for the JNI layer (null stays null). */
  private static byte[] utf8(String call, String what, String value) {
    if (value == null) {
      return null;
    }
    if (value.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(call + ": " + what + " holds a NUL character");
    }
    return value.getBytes(StandardCharsets.UTF_8);
  }
}
