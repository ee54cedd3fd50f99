"""async_op=True: (result, CommHandle); results are filled once wait() returns."""

import gc

import numpy as np
import pytest

import libcomm as comm
from reference import assert_same, reduced, values


def test_all_reduce_async(rank, size):
    inputs = [values(r, (1000,), np.float64) for r in range(size)]
    out, handle = comm.all_reduce(inputs[rank].copy(), comm.ReduceOp.MAX, async_op=True)
    assert isinstance(handle, comm.CommHandle)
    handle.wait()
    assert_same(out, reduced(inputs, "max", np.float64))
    assert handle.is_completed()
    handle.wait()  # waiting again is fine


def test_inputs_live_until_completion(rank, size):
    # The caller drops its input at once: the handle keeps it alive.
    out, handle = comm.all_gather_into_tensor(np.full((2, 3), rank, np.int32), async_op=True)
    gc.collect()
    handle.wait(timeout=30)
    assert_same(out, np.repeat(np.arange(size, dtype=np.int32), 2)[:, None].repeat(3, axis=1))


def test_is_completed_polls(rank, size):
    out, handle = comm.reduce_scatter_tensor(np.ones((size, 2), np.int16), async_op=True)
    while not handle.is_completed():
        pass
    assert_same(out, np.full((1, 2), size, np.int16))


def test_many_outstanding(rank, size):
    started = [comm.all_reduce(np.full(4, i + rank, np.int64), async_op=True) for i in range(16)]
    for i, (out, handle) in enumerate(started):
        handle.wait()
        assert_same(out, np.full(4, size * i + size * (size - 1) // 2, np.int64))


def test_dropped_handle_waits_for_its_operation(rank, size):
    out, handle = comm.all_reduce(np.ones(1 << 16, np.float32), async_op=True)
    del handle  # destroying the handle waits; the result is then complete
    gc.collect()
    assert_same(out, np.full(1 << 16, size, np.float32))


def test_all_to_all_async(rank, size):
    outs, handle = comm.all_to_all_with_output_shape([(2,)] * size, [np.full(2, rank * 10 + p, np.int8)
                                                                       for p in range(size)], async_op=True)
    handle.wait()
    for p, out in enumerate(outs):
        assert_same(out, np.full(2, p * 10 + rank, np.int8))


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_wait_timeout_argument(rank, size, timeout):
    out, handle = comm.all_reduce(np.ones(3, np.uint8), async_op=True)
    handle.wait(timeout=timeout)
    assert_same(out, np.full(3, size, np.uint8))
