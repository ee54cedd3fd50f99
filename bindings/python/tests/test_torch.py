"""torch tensors through __dlpack__ (Debian's python3-torch), without a copy in."""

import numpy as np
import pytest

import libcomm as comm
from libcomm import _comm_swig as C
from libcomm.arrays import as_tensor

torch = pytest.importorskip("torch", reason="python3-torch is not installed")


def address(a):
    return a.__array_interface__["data"][0]


def test_torch_round_trip_without_copy(rank, size):
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3) + rank
    view, _ = as_tensor(t)
    assert address(view) == t.data_ptr()
    out, _ = comm.all_reduce(t)
    assert isinstance(out, np.ndarray)
    back = torch.from_numpy(out)
    expected = torch.arange(6, dtype=torch.float32).reshape(2, 3) * size + size * (size - 1) / 2
    assert torch.equal(back, expected)
    assert torch.equal(t, torch.arange(6, dtype=torch.float32).reshape(2, 3) + rank)  # untouched


def test_torch_bfloat16(rank, size):
    t = torch.tensor([1.0, 2.5, -3.0], dtype=torch.bfloat16) * (rank + 1)
    view, code = as_tensor(t)
    assert code == C.COMM_BFLOAT16 and address(view) == t.data_ptr()
    out, _ = comm.all_reduce(t)
    back = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
    factor = size * (size + 1) / 2
    assert torch.equal(back, torch.tensor([1.0, 2.5, -3.0], dtype=torch.bfloat16) * factor)


def test_torch_non_contiguous_and_int(rank, size):
    t = (torch.arange(12, dtype=torch.int64).reshape(3, 4) + rank).t()
    out, _ = comm.all_gather_into_tensor(t)
    expected = torch.cat([(torch.arange(12).reshape(3, 4) + r).t() for r in range(size)])
    assert torch.equal(torch.from_numpy(out), expected)
