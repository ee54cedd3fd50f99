"""The GIL is released while a rank waits in C: other Python threads run.

Each test makes a rank's progress depend on Python code that another thread
of rank 0 runs while rank 0 waits in C. Were the GIL held, that code could
not run and the wait would end only at COMM_TIMEOUT, with an error. Nothing
is timed, so a busy machine makes the tests slower, never wrong."""

import threading

import numpy as np
import pytest

import libcomm as comm

SPINS = 100_000


def _go_group(name, size):
    """A group of every rank, for the go-ahead, so that the go-ahead and the
    wait it releases are on different communicators."""
    if size < 2:
        pytest.skip("a world of one rank has no other rank for rank 0 to release")
    comm.create_group(name, list(range(size)))
    return name


def test_python_runs_while_another_thread_waits(rank, size):
    # Rank 0's second thread waits in an all_reduce that the other ranks join
    # only once rank 0's main thread, meanwhile, has run SPINS loop rounds.
    go = _go_group("threads_spin", size)
    results = {}

    def wait_in_collective():
        results["out"], _ = comm.all_reduce(np.ones(2, np.float32))

    if rank == 0:
        waiter = threading.Thread(target=wait_in_collective)
        waiter.start()
        spins = 0
        while spins < SPINS:
            spins += 1
        assert waiter.is_alive()  # nobody else has joined the all_reduce yet
        for peer in range(1, size):
            comm.send(np.zeros(1, np.int8), dst=peer, group=go, tag=3)
        waiter.join()
    else:
        comm.recv(np.zeros(1, np.int8), src=0, group=go, tag=3)
        wait_in_collective()
    np.testing.assert_array_equal(results["out"], np.full(2, size, np.float32))
    comm.destroy_group(go)


def test_handle_wait_releases_the_gil(rank, size):
    # Rank 0 waits on a handle; the last rank sends what it waits for only
    # when a ticker thread of rank 0 says so from inside that wait.
    go = _go_group("threads_tick", size)
    last = size - 1
    if rank == 0:
        received, handle = comm.irecv(np.zeros(3), src=last, tag=1)
        ticks = []

        def tick():
            while len(ticks) < SPINS:
                ticks.append(None)
            comm.send(np.zeros(1, np.int8), dst=last, group=go, tag=4)

        ticker = threading.Thread(target=tick)
        ticker.start()
        handle.wait()
        ticker.join()
        np.testing.assert_array_equal(received, np.arange(3.0))
        assert len(ticks) == SPINS
    elif rank == last:
        comm.recv(np.zeros(1, np.int8), src=0, group=go, tag=4)
        comm.send(np.arange(3.0), dst=0, tag=1)
    comm.barrier()
    comm.destroy_group(go)
