"""CUDA arrays (DLPack kDLCUDA, __cuda_array_interface__) through libcomm,
without a copy. Without a GPU the calls fail where comm_tensor_set_memory
does, naming the cause: that the build has no CUDA, or that the machine
shows no device; with one, CuPy and PyTorch arrays all-reduce on the
device and results come back as arrays of the same library."""

import re

import numpy as np
import pytest

import libcomm as comm
from libcomm import _comm_swig as C
from libcomm.arrays import CudaArray, as_tensor

DEVICES, REASON = comm.cuda_device_count()


def refusal_without_a_device():
    """What comm says of CUDA memory it cannot take: a build without CUDA
    says so, and a build with CUDA on a machine without a device says
    that (with the CUDA runtime's reason)."""
    if not comm.has_cuda():
        return "needs a build of comm with CUDA"
    return "no CUDA device visible"


class FakeCudaArray:
    """An array that says it is in CUDA device memory (its memory is a host
    numpy array's): what the binding reads from the protocol can be checked
    on any machine, and where there is no device comm refuses it."""

    def __init__(self, array, stream=None):
        self.array = array
        self.__cuda_array_interface__ = {
            "version": 3,
            "data": (array.__array_interface__["data"][0], False),
            "shape": array.shape,
            "typestr": array.dtype.str,
            "strides": None,
            "stream": stream,
        }


def test_cuda_array_interface_is_read_without_a_copy():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    array, code = as_tensor(FakeCudaArray(host, stream=0x1234))
    assert isinstance(array, CudaArray)
    assert code == C.COMM_FLOAT32
    assert array.address == host.__array_interface__["data"][0]
    assert array.shape == (3, 4) and array.device == 0 and array.stream == 0x1234
    assert as_tensor(FakeCudaArray(host, stream=1))[0].stream is None  # the legacy default stream: no stream


def test_strided_cuda_arrays_are_refused():
    fake = FakeCudaArray(np.zeros((4, 4), np.float32))
    fake.__cuda_array_interface__["strides"] = (4, 16)
    with pytest.raises(TypeError, match="not C-contiguous"):
        as_tensor(fake)


def test_results_of_other_libraries_need_out():
    with pytest.raises(TypeError, match="CuPy or PyTorch.*pass out="):
        comm.all_reduce(FakeCudaArray(np.ones(4, np.float32)))


@pytest.mark.skipif(DEVICES > 0, reason="a CUDA device is visible")
def test_without_a_device_the_call_names_the_cause():
    fake = FakeCudaArray(np.ones(4, np.float32))
    with pytest.raises(comm.CommNotSupportedError, match=re.escape(refusal_without_a_device())) as raised:
        comm.all_reduce(fake, out=fake)
    assert "comm_tensor_set_memory" in str(raised.value)


def _library(name):
    module = pytest.importorskip(name, reason=f"{name} is not installed")
    if DEVICES == 0:
        pytest.skip(f"no CUDA device visible: {REASON}")
    return module


def test_cupy_all_reduce_on_the_device(rank, size):
    cupy = _library("cupy")
    with cupy.cuda.Device(rank % DEVICES):
        x = cupy.arange(1000, dtype=cupy.float32) + rank
        out, _ = comm.all_reduce(x)
        assert isinstance(out, cupy.ndarray) and out.device.id == x.device.id
        expected = cupy.arange(1000, dtype=cupy.float32) * size + size * (size - 1) / 2
        assert bool(cupy.all(out == expected))
        comm.all_reduce(x, out=x)  # in place
        assert bool(cupy.all(x == expected))


def test_torch_cuda_all_reduce_and_bfloat16(rank, size):
    torch = _library("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    device = torch.device("cuda", rank % DEVICES)
    t = torch.full((64,), float(rank + 1), device=device)
    out, _ = comm.all_reduce(t)
    assert isinstance(out, torch.Tensor) and out.device == device
    assert torch.all(out == size * (size + 1) / 2)
    b = torch.full((8,), 1.5, dtype=torch.bfloat16, device=device)
    out, handle = comm.all_reduce(b, async_op=True)
    handle.wait()
    assert out.dtype == torch.bfloat16 and torch.all(out == 1.5 * size)
