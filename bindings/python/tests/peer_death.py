"""The last rank dies (os._exit) while the others wait on it: each survivor
gets CommRemoteError (or CommTimeoutError) naming the dead rank, then exits 0.
Run by CTest under commrun (not a pytest module: a dead rank cannot go on)."""

import os

import numpy as np

import libcomm as comm


def main():
    comm.init()
    rank, size = comm.get_rank(), comm.get_group_size()
    victim = size - 1
    comm.barrier()
    if rank == victim:
        os._exit(0)
    try:
        comm.recv(np.zeros(1), src=victim, tag=1)
    except (comm.CommRemoteError, comm.CommTimeoutError) as error:
        assert f"rank {victim}" in str(error), str(error)
        print(f"survivor {rank}: {type(error).__name__}: {error}", flush=True)
        os._exit(0)  # the world cannot be left cleanly without the victim
    raise AssertionError("recv from a dead rank returned")


if __name__ == "__main__":
    main()
