package org.libcomm;

import java.util.Arrays;

/**
 * What {@link Communicator#agree(int)} returns, the same on every live rank:
 * the bitwise AND of the flags of the ranks that took part, and the ranks
 * that did not, which the others proved to have failed.
 */
public final class Agreement {
  private final int flags;
  private final int[] failedRanks;

  Agreement(int flags, int[] failedRanks) {
    this.flags = flags;
    this.failedRanks = failedRanks;
  }

  /** The bitwise AND of the flags of the ranks that took part (the 32 bits of C's uint32_t). */
  public int flags() {
    return flags;
  }

  /** The ranks of the communicator that did not take part, ascending; empty when none failed. */
  public int[] failedRanks() {
    return failedRanks.clone();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Agreement && ((Agreement) other).flags == flags
        && Arrays.equals(((Agreement) other).failedRanks, failedRanks);
  }

  @Override
  public int hashCode() {
    return 31 * Integer.hashCode(flags) + Arrays.hashCode(failedRanks);
  }

  @Override
  public String toString() {
    return "Agreement(flags 0x" + Integer.toHexString(flags) + ", failed " + Arrays.toString(failedRanks) + ")";
  }
}
