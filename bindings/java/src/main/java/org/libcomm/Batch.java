package org.libcomm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Sends and receives to start together with {@link Communicator#batch} or
 * {@link Communicator#batchAsync}: they complete without deadlock whatever
 * their order and whatever the order of other ranks' batches. Entries with
 * the same peer and tag match in order. A batch holds no native resources
 * and may be run several times; it is not safe for concurrent modification.
 */
public final class Batch {
  private final List<Entry> entries = new ArrayList<>();

  /** Append a send of {@code data} to rank {@code peer} with {@code tag}. */
  public Batch send(Tensor data, int peer, int tag) {
    entries.add(new Entry(true, data, peer, tag));
    return this;
  }

  public Batch send(Tensor data, int peer) {
    return send(data, peer, 0);
  }

  /** Append a receive into {@code data} from rank {@code peer} with {@code tag}. */
  public Batch recv(Tensor data, int peer, int tag) {
    entries.add(new Entry(false, data, peer, tag));
    return this;
  }

  public Batch recv(Tensor data, int peer) {
    return recv(data, peer, 0);
  }

  /** The number of entries. */
  public int size() {
    return entries.size();
  }

  /** A snapshot of the entries, for one run. */
  List<Entry> entries() {
    return Collections.unmodifiableList(new ArrayList<>(entries));
  }

  static final class Entry {
    final boolean isSend;
    final Tensor tensor;
    final int peer;
    final int tag;

    Entry(boolean isSend, Tensor tensor, int peer, int tag) {
      this.isSend = isSend;
      this.tensor = Objects.requireNonNull(tensor, isSend ? "Batch.send: data" : "Batch.recv: data");
      if (tag < 0) {
        throw new IllegalArgumentException("Batch: tag " + tag + " is outside 0..Communicator.TAG_MAX");
      }
      this.peer = peer;
      this.tag = tag;
    }
  }
}
