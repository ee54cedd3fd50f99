"""Any array in: numpy, the buffer protocol, __dlpack__ (numpy's own here; torch in
test_torch.py), bfloat16, non-contiguous, read-only, 0-d and empty inputs."""

import array

import numpy as np
import pytest

import libcomm as comm
from libcomm import _comm_swig as C
from libcomm.arrays import as_tensor
from reference import BFLOAT16, assert_same, from_bfloat16, reduced, to_bfloat16, values


def address(a):
    return a.__array_interface__["data"][0]


def test_contiguous_numpy_is_passed_as_is():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    view, code = as_tensor(a)
    assert view is a
    assert code == C.COMM_FLOAT32


def test_buffer_protocol_is_not_copied():
    raw = bytearray(8)
    view, code = as_tensor(raw)
    view[3] = 7  # the test writes through the view to prove it is the same memory
    assert raw[3] == 7
    assert code == C.COMM_UINT8
    floats = array.array("f", [1.0, 2.0])
    view, code = as_tensor(floats)
    assert view.dtype == np.float32 and code == C.COMM_FLOAT32
    assert address(view) == floats.buffer_info()[0]


def test_numpy_dlpack_is_not_copied():
    class OnlyDLPack:  # hides numpy behind __dlpack__
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(10, dtype=np.int16)
    view, code = as_tensor(OnlyDLPack(a))
    assert address(view) == address(a)
    assert code == C.COMM_INT16
    assert not view.flags.writeable  # libcomm never writes its inputs
    assert_same(view, a)


def test_buffer_inputs_in_collectives(rank, size):
    out, _ = comm.all_reduce(array.array("i", [rank, 1]))
    assert_same(out, np.array([size * (size - 1) // 2, size], np.int32))
    out, _ = comm.all_reduce(memoryview(bytearray([1, 2, 3, 4]))[1:3])
    assert_same(out, np.array([2 * size, 3 * size], np.uint8))
    out = comm.broadcast(b"abc" if rank == 0 else b"xyz")
    assert out.tobytes() == b"abc"


def test_raw_bytes_reinterpreted_with_dtype(rank, size):
    raw = np.array([rank + 1.5, 2.0], np.float64).tobytes()
    out, _ = comm.all_reduce(raw, dtype=np.float64)
    assert_same(out, np.array([size * (size + 1) / 2 + 0.5 * size, 2.0 * size]))


def test_non_contiguous_and_read_only_inputs(rank, size):
    base = np.arange(20, dtype=np.int64).reshape(4, 5) + rank
    strided = base[:, ::2]
    out, _ = comm.all_reduce(strided)
    expected = sum(np.arange(20, dtype=np.int64).reshape(4, 5)[:, ::2] + r for r in range(size))
    assert_same(out, expected)
    frozen = np.full(3, rank, np.int8)
    frozen.flags.writeable = False
    out, _ = comm.all_gather_into_tensor(frozen)
    assert_same(out, np.repeat(np.arange(size, dtype=np.int8), 3))
    swapped = np.arange(3, dtype=">i4") + rank
    out, _ = comm.all_reduce(swapped)
    assert_same(out, (np.arange(3) * size + size * (size - 1) // 2).astype(np.int32))


def test_many_dims(rank, size):
    a = np.ones((1,) * 9 + (2,), np.float32) * (rank + 1)  # more dims than COMM_MAX_DIMS
    out, _ = comm.all_reduce(a)
    assert_same(out, np.full(a.shape, size * (size + 1) / 2, np.float32))
    out, _ = comm.all_gather_into_tensor(a)
    assert out.shape == (size,) + a.shape[1:]


@pytest.mark.parametrize("op", ["sum", "max", "avg", "prod"])
def test_bfloat16_from_uint16_with_dtype(rank, size, op):
    inputs = [values(r, (3, 2), BFLOAT16) for r in range(size)]
    out, _ = comm.all_reduce(inputs[rank], op, dtype=comm.bfloat16)
    assert_same(out, reduced(inputs, op, BFLOAT16))
    # Without dtype the same bits are uint16 and sum as integers.
    out, _ = comm.all_reduce(inputs[rank])
    assert_same(out, np.sum(inputs, axis=0, dtype=np.uint16))


def test_bfloat16_rounds_as_bfloat16(rank, size):
    # 256 + 1 = 257 is no bfloat16: it rounds to even, 256; the other ranks add 0.
    mine = {0: 256.0, 1: 1.0}.get(rank, 0.0)
    out, _ = comm.all_reduce(to_bfloat16([mine]), dtype=comm.bfloat16)
    assert_same(from_bfloat16(out), np.array([256.0], np.float32))
