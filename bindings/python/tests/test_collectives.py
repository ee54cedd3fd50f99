"""Every collective of comm_func against a numpy reference, for every dtype."""

import numpy as np
import pytest

import libcomm as comm
from reference import (DTYPES, DTYPE_IDS, OPS, assert_same, kwargs, numpy_dtype, reduced, supported,
                       values)

SHAPE = (4, 3)


def every_rank(size, shape, dtype, salt=0):
    return [values(r, shape, dtype, salt) for r in range(size)]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", OPS, ids=[str(op) for op in OPS])
def test_all_reduce(rank, size, dtype, op):
    if not supported(dtype, op):
        pytest.skip(f"{op} is not defined for {dtype}")
    inputs = every_rank(size, SHAPE, dtype)
    mine = inputs[rank].copy()
    out, handle = comm.all_reduce(inputs[rank], op, **kwargs(dtype))
    assert handle is None
    assert_same(out, reduced(inputs, op, dtype))
    assert_same(inputs[rank], mine)  # the input is untouched


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_all_reduce_takes_plain_strings(rank, size, op):
    inputs = every_rank(size, (5,), np.int32)
    out, _ = comm.all_reduce(inputs[rank], op=op)
    assert_same(out, reduced(inputs, op, np.int32))


def test_all_reduce_default_is_sum(rank, size):
    inputs = every_rank(size, (2, 8), np.float32)
    out, _ = comm.all_reduce(inputs[rank])
    assert_same(out, np.sum(inputs, axis=0, dtype=np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_all_gather_into_tensor(rank, size, dtype):
    inputs = every_rank(size, SHAPE, dtype)
    out, handle = comm.all_gather_into_tensor(inputs[rank], **kwargs(dtype))
    assert handle is None
    assert_same(out, np.concatenate(inputs))


def test_all_gather_into_tensor_of_0d(rank, size):
    out, _ = comm.all_gather_into_tensor(np.array(rank, np.int64))
    assert_same(out, np.arange(size, dtype=np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_], ids=["float32", "int8", "bool"])
def test_all_gather_into_tensor_uneven(rank, size, dtype):
    counts = [r + 1 for r in range(size)]
    inputs = [values(r, (counts[r], 2), dtype) for r in range(size)]
    out, _ = comm.all_gather_into_tensor_uneven(inputs[rank], counts)
    assert_same(out, np.concatenate(inputs))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", ["sum", "max", "avg"])
def test_reduce_scatter_tensor(rank, size, dtype, op):
    if not supported(dtype, op):
        pytest.skip(f"{op} is not defined for {dtype}")
    inputs = every_rank(size, (2 * size, 3), dtype)
    out, handle = comm.reduce_scatter_tensor(inputs[rank], op, **kwargs(dtype))
    assert handle is None
    assert_same(out, reduced(inputs, op, dtype)[2 * rank:2 * rank + 2])


def test_reduce_scatter_tensor_uneven(rank, size):
    counts = [r % 2 for r in range(size)]  # zero rows for even ranks
    inputs = every_rank(size, (sum(counts), 2), np.int64)
    out, _ = comm.reduce_scatter_tensor_uneven(inputs[rank], counts, comm.ReduceOp.PROD)
    start = sum(counts[:rank])
    assert_same(out, reduced(inputs, "prod", np.int64)[start:start + counts[rank]])


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", ["sum", "min", "prod"])
def test_reduce(rank, size, dtype, op):
    dst = size - 1
    inputs = every_rank(size, SHAPE, dtype)
    out = comm.reduce(inputs[rank], dst, op, **kwargs(dtype))
    if rank == dst:
        assert_same(out, reduced(inputs, op, dtype))
    else:
        assert_same(out, np.zeros(1, numpy_dtype(dtype)))  # comm_func's placeholder


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_broadcast(rank, size, dtype):
    src = 1 % size
    inputs = every_rank(size, SHAPE, dtype)
    out = comm.broadcast(inputs[rank], src=src, **kwargs(dtype))
    assert_same(out, inputs[src])
    assert out is not inputs[rank]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_scatter_tensor(rank, size, dtype):
    inputs = every_rank(size, (3 * size, 2), dtype)
    out = comm.scatter_tensor(inputs[rank], src=0, **kwargs(dtype))
    assert_same(out, inputs[0][3 * rank:3 * rank + 3])


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_gather_into_tensor(rank, size, dtype):
    inputs = every_rank(size, SHAPE, dtype)
    out = comm.gather_into_tensor(inputs[rank], dst=0, **kwargs(dtype))
    if rank == 0:
        assert_same(out, np.concatenate(inputs))
    else:
        assert_same(out, np.zeros(1, numpy_dtype(dtype)))


def test_barrier(size):
    for _ in range(3):
        assert comm.barrier() is None


def test_comm_func_module_and_world_aliases(rank, size):
    x = np.full(3, rank + 1, np.float64)
    out, _ = comm.comm_func.all_reduce(x, group="hccl_world_group")
    assert_same(out, np.full(3, size * (size + 1) / 2))
    assert comm.GlobalComm.WORLD_COMM_GROUP == comm.WORLD_COMM_GROUP


def test_empty_and_0d_arrays(rank, size):
    out, _ = comm.all_reduce(np.zeros((0, 5), np.float32))
    assert out.shape == (0, 5)
    out, _ = comm.all_reduce(np.array(rank + 1, np.int32))
    assert_same(out, np.array(size * (size + 1) // 2, np.int32))
    out = comm.broadcast(np.array(7.5 if rank == 0 else 0.0))
    assert_same(out, np.array(7.5))
