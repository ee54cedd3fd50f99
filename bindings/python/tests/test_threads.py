"""The GIL is released while a rank waits in C: other Python threads run."""

import threading
import time

import numpy as np

import libcomm as comm


def test_python_runs_while_another_thread_waits(rank, size):
    # Rank 0 waits in a collective that the other ranks join only after
    # 0.5 s; meanwhile rank 0's main thread must keep running Python code.
    results = {}

    def wait_in_collective():
        results["out"], _ = comm.all_reduce(np.ones(2, np.float32))

    if rank == 0:
        waiter = threading.Thread(target=wait_in_collective)
        waiter.start()
        time.sleep(0.05)
        spins, start = 0, time.monotonic()
        while time.monotonic() - start < 0.3:
            spins += 1
        assert waiter.is_alive()  # still blocked in C...
        assert spins > 10_000  # ...while this thread ran freely
        waiter.join(timeout=60)
        assert not waiter.is_alive()
    else:
        time.sleep(0.5)
        wait_in_collective()
    np.testing.assert_array_equal(results["out"], np.full(2, size, np.float32))


def test_handle_wait_releases_the_gil(rank, size):
    # Rank 0 waits on a handle for ~0.3 s; a ticker thread must tick meanwhile.
    if rank == 0:
        received, handle = comm.irecv(np.zeros(3), src=size - 1, tag=1)
        ticks = []
        ticker = threading.Thread(target=lambda: [ticks.append(time.sleep(0.01)) for _ in range(20)])
        ticker.start()
        handle.wait()
        ticked_while_waiting = len(ticks)
        ticker.join()
        np.testing.assert_array_equal(received, np.arange(3.0))
        assert ticked_while_waiting >= 10
    if rank == size - 1:
        time.sleep(0.3)
        comm.send(np.arange(3.0), dst=0, tag=1)
    comm.barrier()
