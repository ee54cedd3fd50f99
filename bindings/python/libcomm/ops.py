"""Reduce operations, named as in MindSpore."""

import enum

from . import _comm_swig as _c

__all__ = ["ReduceOp"]


class ReduceOp(enum.StrEnum):
    """A reduce operation. Each member equals its string ("sum"), and plain
    strings are accepted wherever an op is. SUM, MAX, MIN and PROD are
    MindSpore's; AVG (not for bool) and the bitwise ops (integer and bool
    only) are the C library's. On bool, SUM and MAX are logical or, PROD and
    MIN logical and.
    """

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    # Members hash like their strings, so dicts keyed by "sum" find ReduceOp.SUM.
    __hash__ = str.__hash__


_CODES = {
    ReduceOp.SUM: _c.COMM_OP_SUM,
    ReduceOp.MAX: _c.COMM_OP_MAX,
    ReduceOp.MIN: _c.COMM_OP_MIN,
    ReduceOp.PROD: _c.COMM_OP_PROD,
    ReduceOp.AVG: _c.COMM_OP_AVG,
    ReduceOp.BAND: _c.COMM_OP_BAND,
    ReduceOp.BOR: _c.COMM_OP_BOR,
    ReduceOp.BXOR: _c.COMM_OP_BXOR,
}


def op_code(op: ReduceOp | str, call: str) -> int:
    """The comm_op_t of ``op``; TypeError for a non-str or unknown op, as comm_func."""
    try:
        return _CODES[op]
    except (KeyError, TypeError):
        pass
    if not isinstance(op, str):
        raise TypeError(f"For {call}, the input op type must be str (a ReduceOp), not {type(op).__name__}")
    raise TypeError(f"For {call}, the input op value must be one of {', '.join(_CODES)}, not {op!r}")
