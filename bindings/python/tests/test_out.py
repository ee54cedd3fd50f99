"""``out=``: results written into the caller's own buffer, in place, for
every collective that has a result; and the checks that refuse a buffer the
result cannot go into, on every rank, before any communication."""

import numpy as np
import pytest

import libcomm as comm
from reference import BFLOAT16, assert_same, reduced, values

SENTINEL = -7


def every_rank(size, shape, dtype, salt=0):
    return [values(r, shape, dtype, salt) for r in range(size)]


def sentinel(shape, dtype):
    return np.full(shape, SENTINEL, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, BFLOAT16], ids=["float32", "int64", "bfloat16"])
def test_all_reduce_into_out(rank, size, dtype):
    inputs = every_rank(size, (4, 3), dtype)
    mine = inputs[rank].copy()
    out = np.empty_like(inputs[rank])
    kwargs = {"dtype": BFLOAT16} if dtype is BFLOAT16 else {}
    result, handle = comm.all_reduce(inputs[rank], out=out, **kwargs)
    assert result is out and handle is None
    assert_same(out, reduced(inputs, "sum", dtype))
    assert_same(inputs[rank], mine)


def test_all_reduce_in_place(rank, size):
    inputs = every_rank(size, (6,), np.float64)
    data = inputs[rank].copy()
    result, _ = comm.all_reduce(data, comm.ReduceOp.MAX, out=data)
    assert result is data
    assert_same(data, np.max(inputs, axis=0))


def test_all_reduce_async_fills_out_on_wait(rank, size):
    inputs = every_rank(size, (1000,), np.int32)
    out = sentinel((1000,), np.int32)
    result, handle = comm.all_reduce(inputs[rank], out=out, async_op=True)
    assert result is out
    handle.wait()
    assert_same(out, np.sum(inputs, axis=0, dtype=np.int32))


def test_all_reduce_into_a_writable_buffer(rank, size):
    """A buffer-protocol object of raw bytes, read as float32 with dtype=."""
    inputs = every_rank(size, (4,), np.float32)
    buffer = bytearray(16)
    result, _ = comm.all_reduce(inputs[rank], out=buffer, dtype=np.float32)
    expected = np.sum(inputs, axis=0, dtype=np.float32)
    assert_same(result, expected)
    assert_same(np.frombuffer(buffer, np.float32), expected)


def test_all_gather_and_uneven_into_out(rank, size):
    inputs = every_rank(size, (2, 3), np.int16)
    out = sentinel((2 * size, 3), np.int16)
    assert comm.all_gather_into_tensor(inputs[rank], out=out)[0] is out
    assert_same(out, np.concatenate(inputs))

    counts = [r + 1 for r in range(size)]
    uneven = [values(r, (counts[r], 2), np.uint8) for r in range(size)]
    out = sentinel((sum(counts), 2), np.uint8)
    assert comm.all_gather_into_tensor_uneven(uneven[rank], counts, out=out)[0] is out
    assert_same(out, np.concatenate(uneven))


def test_reduce_scatter_and_uneven_into_out(rank, size):
    inputs = every_rank(size, (2 * size, 3), np.float32)
    out = sentinel((2, 3), np.float32)
    assert comm.reduce_scatter_tensor(inputs[rank], "sum", out=out)[0] is out
    assert_same(out, np.sum(inputs, axis=0, dtype=np.float32)[2 * rank:2 * rank + 2])

    counts = [r + 1 for r in range(size)]
    rows = sum(counts)
    uneven = every_rank(size, (rows, 2), np.int32)
    out = sentinel((counts[rank], 2), np.int32)
    assert comm.reduce_scatter_tensor_uneven(uneven[rank], counts, out=out)[0] is out
    start = sum(counts[:rank])
    assert_same(out, np.sum(uneven, axis=0, dtype=np.int32)[start:start + counts[rank]])


def test_broadcast_in_place(rank, size):
    root = size - 1
    data = values(root, (5,), np.float64) if rank == root else np.zeros(5, np.float64)
    assert comm.broadcast(data, src=root, out=data) is data
    assert_same(data, values(root, (5,), np.float64))


def test_reduce_and_gather_write_out_on_the_root_only(rank, size):
    root = size - 1
    inputs = every_rank(size, (3,), np.int64)
    out = sentinel((3,), np.int64)
    assert comm.reduce(inputs[rank], root, out=out) is out
    assert_same(out, np.sum(inputs, axis=0) if rank == root else sentinel((3,), np.int64))

    out = sentinel((3 * size,), np.int64)
    assert comm.gather_into_tensor(inputs[rank], dst=root, out=out) is out
    assert_same(out, np.concatenate(inputs) if rank == root else sentinel((3 * size,), np.int64))


def test_scatter_into_out(rank, size):
    root = 0
    data = values(root, (2 * size,), np.uint32)
    out = sentinel((2,), np.uint32)
    assert comm.scatter_tensor(data, src=root, out=out) is out
    assert_same(out, data[2 * rank:2 * rank + 2])


def test_all_to_all_into_out(rank, size):
    sent = [np.full((p + 1,), rank * 10 + p, np.int32) for p in range(size)]
    outs = [sentinel((rank + 1,), np.int32) for _ in range(size)]
    results, _ = comm.all_to_all_with_output_shape([o.shape for o in outs], sent, out=outs)
    assert all(result is out for result, out in zip(results, outs))
    for p, out in enumerate(outs):
        assert_same(out, np.full((rank + 1,), p * 10 + rank, np.int32))

    single = np.repeat(np.arange(size, dtype=np.float32) + 100 * rank, 2)
    out = sentinel((2 * size,), np.float32)
    assert comm.all_to_all_single_with_output_shape(out.shape, single, out=out)[0] is out
    assert_same(out, np.repeat(np.arange(size, dtype=np.float32) * 100 + rank, 2))


def test_recv_into_out(rank, size):
    left, right = (rank - 1) % size, (rank + 1) % size
    handle = comm.isend(np.full(4, rank, np.int8), dst=right, tag=3)
    out = sentinel((4,), np.int8)
    assert comm.recv(out, src=left, tag=3, out=out) is out
    handle.wait()
    assert_same(out, np.full(4, left, np.int8))


# --- refused buffers: the same error on every rank, before any communication ---


def test_out_of_the_wrong_shape_is_a_value_error():
    with pytest.raises(ValueError, match="shape"):
        comm.all_reduce(np.ones(4, np.float32), out=np.empty(5, np.float32))
    with pytest.raises(ValueError, match="shape"):
        comm.all_gather_into_tensor(np.ones(4, np.float32), out=np.empty(4, np.float32))


def test_out_of_the_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="dtype"):
        comm.all_reduce(np.ones(4, np.float32), out=np.empty(4, np.float64))
    with pytest.raises(TypeError, match="dtype"):
        comm.all_reduce(np.ones(4, np.uint16), out=np.empty(4, np.float32), dtype=BFLOAT16)
    with pytest.raises(TypeError, match="dtype"):
        comm.reduce(np.ones(4, np.int32), 0, out=np.empty(4, np.uint32))


def test_out_that_cannot_be_written_in_place_is_a_value_error():
    strided = np.empty(8, np.float32)[::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        comm.all_reduce(np.ones(4, np.float32), out=strided)
    read_only = np.empty(4, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        comm.all_reduce(np.ones(4, np.float32), out=read_only)
    with pytest.raises(ValueError, match="read-only"):
        comm.all_reduce(np.ones(4, np.uint8), out=bytes(4))
    with pytest.raises(ValueError, match="byte order"):
        comm.all_reduce(np.ones(4, np.float32), out=np.empty(4, np.dtype(np.float32).newbyteorder()))


def test_out_that_is_not_an_array_is_a_type_error():
    with pytest.raises(TypeError, match="out"):
        comm.all_reduce(np.ones(4, np.float32), out=[0.0] * 4)
    with pytest.raises(TypeError, match="out must be a list or tuple"):
        comm.all_to_all_with_output_shape([(1,)], [np.ones(1)], out=np.empty(1))


def test_out_lists_need_one_array_per_rank(size):
    with pytest.raises(ValueError, match="out"):
        comm.all_to_all_with_output_shape([(1,)] * size, [np.ones(1)] * size, out=[np.empty(1)] * (size + 1))
