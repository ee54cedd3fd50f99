"""A newcomer for test_management's grow tests: rank 0 starts it with
COMM_JOIN=1, its init() joins the group the job's ranks grow, and it checks
its part of that group as the ranks do (check_grown). Exits 0 when every
check held. Not a pytest module: it is a process of its own."""

import sys

import numpy as np

import libcomm as comm

STATE_LENGTH = 4099


def state(rank):
    """What rank 0 broadcasts to the grown group; others start from -1."""
    return np.arange(STATE_LENGTH, dtype=np.int64) * 31 + 5 if rank == 0 else np.full(STATE_LENGTH, -1, np.int64)


def check_grown(group, old_size):
    """The checks every member of a grown group makes, newcomers too, in the
    same order (each is a collective): the failed ones, by name."""
    rank, size = comm.get_rank(group), comm.get_group_size(group)
    failed = []
    if size != old_size + 1:
        failed.append(f"size {size}, expected {old_size + 1}")
    # The group is a world of its own: its world ranks are its ranks.
    if comm.get_world_rank_from_group_rank(group, size - 1) != size - 1:
        failed.append("the newcomer's world rank")
    received = comm.broadcast(state(rank), src=0, group=group)
    if not np.array_equal(received, state(0)):
        failed.append("the broadcast state")
    total, _ = comm.all_reduce(np.array([rank * 7 + 1], np.int64), group=group)
    expected = sum(r * 7 + 1 for r in range(size))
    if total[0] != expected:
        failed.append(f"all_reduce gave {total[0]}, expected {expected}")
    return failed


def main():
    comm.init()
    rank, size = comm.get_rank(), comm.get_group_size()
    failed = check_grown(comm.WORLD_COMM_GROUP, size - 1)
    if rank != size - 1:
        failed.append(f"the newcomer has rank {rank} of {size}, not the last")
    print(f"newcomer, rank {rank} of {size}: {'ok' if not failed else 'FAILED: ' + '; '.join(failed)}", flush=True)
    comm.release()
    sys.exit(0 if not failed else 1)


if __name__ == "__main__":
    main()
