"""Arrays in: any numpy array, buffer-protocol object or ``__dlpack__`` object
becomes a C-contiguous numpy array over the same memory (a copy only when
the input is not C-contiguous or not in native byte order) plus the
comm_dtype_t the C library is told.

numpy has no bfloat16, so bfloat16 data travels in uint16 arrays: it comes
from a DLPack producer that says bfloat16 (torch.bfloat16), or from any
2-byte array passed with ``dtype=libcomm.bfloat16``. Results of bfloat16
calls are uint16 arrays holding the bfloat16 bits
(``torch.from_numpy(out).view(torch.bfloat16)`` turns one back).
"""

from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from . import _comm_swig as _c

__all__ = ["bfloat16", "as_tensor", "as_output", "from_dlpack", "cuda_array", "new_like", "user_array", "Array",
           "CudaArray", "DTypeLike", "SupportsDLPack", "TensorLike"]

#: Pass as ``dtype=`` to read 2-byte elements as bfloat16.
bfloat16 = "bfloat16"


class SupportsDLPack(Protocol):
    """An object that exports its memory through DLPack (a torch tensor, ...)."""

    def __dlpack__(self) -> Any: ...


#: What a call takes as an array: a numpy array, a buffer-protocol object, a
#: ``__dlpack__`` producer, or a CUDA array (``__cuda_array_interface__`` or
#: DLPack kDLCUDA: CuPy, PyTorch CUDA tensors, Numba).
TensorLike: TypeAlias = np.ndarray | SupportsDLPack | bytes | bytearray | memoryview
#: A numpy array, as the calls return them.
Array: TypeAlias = npt.NDArray[Any]
#: What ``dtype=`` takes: anything ``numpy.dtype()`` takes, or ``libcomm.bfloat16``.
DTypeLike: TypeAlias = npt.DTypeLike
#: (C-contiguous array, comm_dtype_t): what the C wrapper takes for a tensor.
Tensor: TypeAlias = tuple[Array, int]

_CODES = {
    np.dtype(np.int8): _c.COMM_INT8,
    np.dtype(np.uint8): _c.COMM_UINT8,
    np.dtype(np.int16): _c.COMM_INT16,
    np.dtype(np.uint16): _c.COMM_UINT16,
    np.dtype(np.int32): _c.COMM_INT32,
    np.dtype(np.uint32): _c.COMM_UINT32,
    np.dtype(np.int64): _c.COMM_INT64,
    np.dtype(np.uint64): _c.COMM_UINT64,
    np.dtype(np.longlong): _c.COMM_INT64,
    np.dtype(np.ulonglong): _c.COMM_UINT64,
    np.dtype(np.float16): _c.COMM_FLOAT16,
    np.dtype(np.float32): _c.COMM_FLOAT32,
    np.dtype(np.float64): _c.COMM_FLOAT64,
    np.dtype(np.bool_): _c.COMM_BOOL,
}

# DLPack (type code, bits) -> (numpy dtype of the view, comm dtype).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_BOOL = 0, 1, 2, 4, 6
_DLPACK_TYPES = {
    (_DL_BFLOAT, 16): (np.dtype(np.uint16), _c.COMM_BFLOAT16),
    (_DL_BOOL, 8): (np.dtype(np.bool_), _c.COMM_BOOL),
}
for _dtype in _CODES:
    _kind = {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT}.get(_dtype.kind)
    if _kind is not None:
        _DLPACK_TYPES[(_kind, _dtype.itemsize * 8)] = (_dtype, _CODES[_dtype])

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST = 1, 2, 3
# __cuda_array_interface__'s stream values that name no stream of their own:
# none given, and the legacy default stream.
_NO_STREAM = (None, 1)


class CudaArray:
    """A C-contiguous array in CUDA device memory (CuPy, PyTorch, Numba...),
    seen through DLPack or ``__cuda_array_interface__`` without a copy: what
    libcomm hands the C wrapper for it, and what it returns to the caller
    (``owner``, the array itself). ``code`` is its comm dtype where the
    protocol says (DLPack), ``device`` its CUDA device ordinal (0 where the
    protocol does not say: comm checks the pointer and names the right one),
    ``stream`` the CUDA stream ``__cuda_array_interface__`` names (an int
    address), or None."""

    __slots__ = ("owner", "address", "shape", "dtype", "code", "device", "stream", "_comm_cuda", "_capsule")

    def __init__(self, owner, address: int, shape: tuple[int, ...], dtype: np.dtype, code: int | None, device: int,
                 stream, capsule=None):
        self.owner, self.address, self.shape, self.dtype, self.code = owner, address, tuple(shape), dtype, code
        self.device, self.stream, self._capsule = device, stream, capsule
        # What tensors.i reads: where the data is, and on which device.
        self._comm_cuda = (address, self.shape, device)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


def _contiguous(shape, strides, itemsize: int) -> bool:
    """Whether ``strides`` (bytes, or None) are C-contiguous for ``shape``."""
    if strides is None:
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


def _device_of(obj, default: int) -> int:
    """The CUDA device ordinal ``obj`` says it is on (``__dlpack_device__``),
    else ``default``; comm checks the pointer against it either way."""
    if hasattr(obj, "__dlpack_device__"):
        kind, ordinal = obj.__dlpack_device__()
        if int(kind) == _DL_CUDA:
            return int(ordinal)
    return default


def cuda_array(obj) -> "CudaArray | None":
    """``obj`` as a CudaArray when it is in CUDA device memory, else None:
    through DLPack where its ``__dlpack_device__`` says kDLCUDA (CuPy,
    PyTorch; bfloat16 too; the producer makes the data ready for the legacy
    default stream, which comm's calls without a stream follow), else
    through ``__cuda_array_interface__`` (Numba; its ``stream``, when it
    names one, orders the call). Arrays that are not C-contiguous are a
    TypeError: comm never copies device memory behind the caller's back."""
    if hasattr(obj, "__dlpack_device__") and int(obj.__dlpack_device__()[0]) == _DL_CUDA:
        capsule = obj.__dlpack__()
        address, shape, strides, code, bits, lanes, _, ordinal = _c.dlpack_describe(capsule)
        try:
            dtype, comm_dtype = _DLPACK_TYPES[(code, bits)]
        except KeyError:
            raise TypeError(f"DLPack dtype (code {code}, {bits} bits) has no comm dtype") from None
        byte_strides = None if strides is None else [x * dtype.itemsize for x in strides]
        if lanes != 1 or not _contiguous(shape, byte_strides, dtype.itemsize):
            raise TypeError("a CUDA array that is not C-contiguous, or has vector lanes")
        return CudaArray(obj, address, shape, dtype, comm_dtype, ordinal, None, capsule)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is None:
        return None
    dtype = np.dtype(interface["typestr"])
    shape = tuple(interface["shape"])
    if not _contiguous(shape, interface.get("strides"), dtype.itemsize):
        raise TypeError("a CUDA array that is not C-contiguous; make it contiguous first")
    if interface["data"][1] is True:
        raise TypeError("a read-only CUDA array")
    stream = interface.get("stream")
    return CudaArray(obj, int(interface["data"][0]), shape, dtype, None, 0, None if stream in _NO_STREAM else stream)


def _cuda_tensor(array: CudaArray, dtype: DTypeLike | None) -> Tensor:
    """(array, comm dtype) for a CUDA array, read as ``dtype`` when given
    (bfloat16 for 2-byte elements, or the array's own dtype: device memory
    is not reinterpreted here)."""
    if dtype is not None and str(dtype).rsplit(".", 1)[-1] == bfloat16 and array.dtype.itemsize == 2:
        return array, _c.COMM_BFLOAT16
    if dtype is not None and np.dtype(dtype) != array.dtype:
        raise TypeError(f"dtype {dtype} differs from the CUDA array's {array.dtype}")
    return array, _code(array.dtype) if array.code is None else array.code


def new_like(shape, like: Tensor) -> Tensor:
    """A new tensor of ``shape`` with the dtype, memory and device of
    ``like``: a numpy array, or for a CUDA array one of the same library
    (CuPy or PyTorch) on the same device."""
    array, code = like
    if not isinstance(array, CudaArray):
        return np.empty(shape, array.dtype), code
    owner = array.owner
    module = type(owner).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        with cupy.cuda.Device(array.device):
            made = cupy.empty(shape, array.dtype)
    elif module == "torch":
        import torch
        made = torch.empty(shape, dtype=owner.dtype, device=owner.device)
    else:
        raise TypeError(f"libcomm allocates results of CUDA arrays with CuPy or PyTorch, not {module}; pass out=")
    return cuda_array(made), code


def user_array(array):
    """What a call returns for one of its tensors' arrays: the caller's own
    CUDA array object for a CudaArray, the numpy array otherwise."""
    return array.owner if isinstance(array, CudaArray) else array


class _DLPackView:
    """Exposes a DLPack tensor to numpy and keeps its capsule (its owner) alive."""

    __slots__ = ("capsule", "__array_interface__")

    def __init__(self, capsule, interface):
        self.capsule = capsule
        self.__array_interface__ = interface


def from_dlpack(obj: SupportsDLPack, *, writable: bool = False) -> Tensor:
    """(numpy view of ``obj.__dlpack__()``, comm dtype), without copying;
    read-only unless ``writable`` (for an output the call writes into)."""
    capsule = obj.__dlpack__()
    address, shape, strides, code, bits, lanes, device, _ = _c.dlpack_describe(capsule)
    if device not in (_DL_CPU, _DL_CUDA_HOST):
        raise TypeError(f"a tensor in DLPack device type {device} memory; libcomm's Python binding takes host memory")
    try:
        dtype, comm_dtype = _DLPACK_TYPES[(code, bits)]
    except KeyError:
        raise TypeError(f"DLPack dtype (code {code}, {bits} bits) has no comm dtype") from None
    if lanes != 1:
        raise TypeError(f"DLPack dtype with {lanes} lanes has no comm dtype")
    if 0 in shape:
        return np.empty(shape, dtype), comm_dtype
    interface = {
        "version": 3,
        "data": (address, not writable),
        "shape": shape,
        "typestr": dtype.str,
        "strides": None if strides is None else tuple(s * dtype.itemsize for s in strides),
    }
    return np.asarray(_DLPackView(capsule, interface)), comm_dtype


def _numpy_view(obj: TensorLike, writable: bool = False) -> tuple[Array, int | None]:
    """(ndarray over obj's memory, comm dtype or None to derive from the array)."""
    if isinstance(obj, np.ndarray):
        return obj, None
    if hasattr(obj, "__dlpack__"):
        return from_dlpack(obj, writable=writable)
    try:
        return np.asarray(memoryview(obj)), None
    except TypeError:
        raise TypeError(
            f"expected an array (numpy, buffer protocol or __dlpack__), got {type(obj).__name__}") from None


def _explicit(array: Array, dtype: DTypeLike) -> Tensor:
    """Reinterpret ``array``'s memory as ``dtype`` (same element size, or raw
    bytes): (array, comm dtype)."""
    if str(dtype).rsplit(".", 1)[-1] == bfloat16:  # also torch.bfloat16
        view, code = np.dtype(np.uint16), _c.COMM_BFLOAT16
    else:
        try:
            view = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype {dtype!r} is neither a numpy dtype nor libcomm.bfloat16") from None
        code = _code(view)
    if view.itemsize != array.dtype.itemsize and array.dtype.itemsize != 1:
        # Reading float32 data "as bfloat16" would be a silent mistake; only
        # raw bytes change their element size.
        raise TypeError(f"dtype {dtype} has {view.itemsize}-byte elements but the array's {array.dtype} has "
                        f"{array.dtype.itemsize}; convert the values first")
    if view != array.dtype:
        array = array.view(view)
    return array, code


def _code(dtype: np.dtype) -> int:
    try:
        return _CODES[dtype]
    except KeyError:
        raise TypeError(f"dtype {dtype} has no comm dtype") from None


def as_tensor(obj: TensorLike, dtype: DTypeLike | None = None) -> Tensor:
    """The pair (C-contiguous ndarray, comm dtype) the C wrapper takes for ``obj``."""
    if dtype is None and obj.__class__ is np.ndarray:  # the common case, kept short
        code = _CODES.get(obj.dtype)
        if code is not None and obj.flags.c_contiguous:
            return obj, code
    device = cuda_array(obj)
    if device is not None:
        return _cuda_tensor(device, dtype)
    array, code = _numpy_view(obj)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if dtype is not None:
        return _explicit(array, dtype)
    return array, _code(array.dtype) if code is None else code


def as_output(obj: TensorLike, dtype: DTypeLike | None = None) -> Tensor:
    """The pair (ndarray over ``obj``'s own memory, comm dtype) for a caller's
    output buffer: unlike an input, it is never copied, so a buffer the C
    library could not write in place is a ValueError."""
    device = cuda_array(obj)
    if device is not None:
        return _cuda_tensor(device, dtype)
    array, code = _numpy_view(obj)
    if not array.flags.c_contiguous:
        raise ValueError("it is not C-contiguous (results are written in place, never through a copy)")
    if not array.flags.writeable:
        raise ValueError("it is read-only")
    if not array.dtype.isnative:
        raise ValueError(f"its dtype {array.dtype} is not in native byte order")
    if dtype is not None:
        return _explicit(array, dtype)
    return array, _code(array.dtype) if code is None else code
