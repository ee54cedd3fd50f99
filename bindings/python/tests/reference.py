"""Inputs every rank can compute for every other rank, and numpy references."""

import numpy as np

import libcomm as comm

BFLOAT16 = comm.bfloat16

# Every dtype of the C API; bfloat16 travels as uint16 bits.
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.bool_, BFLOAT16]
DTYPE_IDS = [np.dtype(d).name if d is not BFLOAT16 else "bfloat16" for d in DTYPES]

OPS = list(comm.ReduceOp)
BITWISE = {comm.ReduceOp.BAND, comm.ReduceOp.BOR, comm.ReduceOp.BXOR}


def is_float(dtype):
    return dtype is BFLOAT16 or np.dtype(dtype).kind == "f"


def supported(dtype, op):
    if dtype is np.bool_:
        return op != "avg"  # the mean of bools is no bool
    return not (op in BITWISE and is_float(dtype))


def to_bfloat16(values):
    """bfloat16 bits of float32 values that bfloat16 holds exactly."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_bfloat16(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def values(rank, shape, dtype, salt=0):
    """Rank `rank`'s input: small integers (1..3, or booleans), so that sums,
    products and averages over up to 8 ranks are exact in every dtype."""
    n = int(np.prod(shape, dtype=np.int64))
    base = (np.arange(n, dtype=np.int64) * 5 + rank * 3 + salt) % 3
    if dtype is np.bool_:
        return (base == 0).reshape(shape)
    data = (base + 1).reshape(shape)
    return to_bfloat16(data) if dtype is BFLOAT16 else data.astype(dtype)


def kwargs(dtype):
    """The dtype argument a call needs for arrays of `dtype`."""
    return {"dtype": BFLOAT16} if dtype is BFLOAT16 else {}


def reduced(arrays, op, dtype):
    """op over `arrays` (one per rank) as the C library defines it."""
    stack = np.stack([from_bfloat16(a) if dtype is BFLOAT16 else a for a in arrays])
    n = len(arrays)
    op = comm.ReduceOp(op)
    if dtype is np.bool_:
        logical = {"sum": np.any, "max": np.any, "bor": np.any,
                   "prod": np.all, "min": np.all, "band": np.all}
        if op == "bxor":
            return np.logical_xor.reduce(stack, axis=0)
        return logical[op](stack, axis=0)
    work = np.float32 if dtype is BFLOAT16 else dtype
    if op in ("sum", "avg"):
        result = np.sum(stack, axis=0, dtype=work)
        if op == "avg":
            result = result / n if is_float(dtype) else result // n
    elif op == "prod":
        result = np.prod(stack, axis=0, dtype=work)
    elif op == "min":
        result = np.min(stack, axis=0)
    elif op == "max":
        result = np.max(stack, axis=0)
    else:
        ufunc = {"band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}[op]
        result = ufunc.reduce(stack, axis=0)
    result = np.asarray(result)
    if dtype is BFLOAT16:
        return to_bfloat16(result)
    return result.astype(dtype)


def numpy_dtype(dtype):
    return np.dtype(np.uint16) if dtype is BFLOAT16 else np.dtype(dtype)


def assert_same(actual, expected):
    assert isinstance(actual, np.ndarray)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)
