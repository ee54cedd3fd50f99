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

__all__ = ["bfloat16", "as_tensor", "as_output", "from_dlpack", "Array", "DTypeLike", "SupportsDLPack", "TensorLike"]

#: Pass as ``dtype=`` to read 2-byte elements as bfloat16.
bfloat16 = "bfloat16"


class SupportsDLPack(Protocol):
    """An object that exports its memory through DLPack (a torch tensor, ...)."""

    def __dlpack__(self) -> Any: ...


#: What a call takes as an array: a numpy array, a buffer-protocol object or
#: a ``__dlpack__`` producer.
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

_DL_CPU, _DL_CUDA_HOST = 1, 3


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
