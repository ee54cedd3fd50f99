"""all_to_all_with_output_shape and all_to_all_single_with_output_shape."""

import numpy as np
import pytest

import libcomm as comm
from reference import DTYPES, DTYPE_IDS, assert_same, kwargs, values


def block(sender, receiver, shape, dtype):
    """What `sender` sends `receiver`."""
    return values(sender * 16 + receiver, shape, dtype)


def shape_between(sender, receiver):
    return (sender + 1, receiver + 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_all_to_all_with_output_shape(rank, size, dtype):
    inputs = [block(rank, p, shape_between(rank, p), dtype) for p in range(size)]
    output_shapes = [shape_between(p, rank) for p in range(size)]
    outs, handle = comm.all_to_all_with_output_shape(output_shapes, inputs, **kwargs(dtype))
    assert handle is None and isinstance(outs, tuple) and len(outs) == size
    for p in range(size):
        assert_same(outs[p], block(p, rank, shape_between(p, rank), dtype))


def test_all_to_all_shapes_from_arrays_lists_and_0d(rank, size):
    # comm_func's example generalised: 0-d blocks, shapes given as lists and as arrays.
    inputs = [np.array(rank * 10.0 + p, np.float32) for p in range(size)]
    shapes = [np.empty((), np.float32) if p % 2 else [] for p in range(size)]
    outs, _ = comm.all_to_all_with_output_shape(shapes, inputs)
    for p in range(size):
        assert_same(outs[p], np.array(p * 10.0 + rank, np.float32))


def test_all_to_all_empty_blocks(rank, size):
    inputs = [np.arange(p, dtype=np.int32) + rank for p in range(size)]
    outs, _ = comm.all_to_all_with_output_shape([(rank,)] * size, inputs)
    for p in range(size):
        assert_same(outs[p], np.arange(rank, dtype=np.int32) + p)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_all_to_all_single_even(rank, size, dtype):
    inputs = [values(r, (2 * size, 3), dtype) for r in range(size)]
    out, handle = comm.all_to_all_single_with_output_shape((2 * size, 3), inputs[rank], **kwargs(dtype))
    assert handle is None
    assert_same(out, np.concatenate([inputs[p][2 * rank:2 * rank + 2] for p in range(size)]))


def test_all_to_all_single_comm_func_example(rank, size):
    out, _ = comm.all_to_all_single_with_output_shape((size,), np.arange(size) + rank * size)
    assert_same(out, np.arange(size) * size + rank)


def test_all_to_all_single_uneven_with_zero_splits(rank, size):
    def rows(sender, receiver):
        return (sender + 2 * receiver) % 3  # some zero

    def rows_data(sender, receiver):
        return np.full((rows(sender, receiver), 2), sender * 100 + receiver, np.int64)

    in_splits = [rows(rank, p) for p in range(size)]
    out_splits = [rows(p, rank) for p in range(size)]
    tensor = np.concatenate([rows_data(rank, p) for p in range(size)])
    out, _ = comm.all_to_all_single_with_output_shape([sum(out_splits), 2], tensor, out_splits, in_splits)
    assert_same(out, np.concatenate([rows_data(p, rank) for p in range(size)]))


def test_all_to_all_single_async_with_array_shape(rank, size):
    tensor = np.arange(size * 4, dtype=np.float64).reshape(size, 4) + 100 * rank
    out, handle = comm.all_to_all_single_with_output_shape(np.empty((size, 4)), tensor, async_op=True)
    handle.wait()
    assert_same(out, np.stack([np.arange(4.0) + 4 * rank + 100 * p for p in range(size)]))
