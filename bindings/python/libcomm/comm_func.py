"""The functions of ``mindspore.communication.comm_func`` (2.6) on arrays.

Same names, parameters, defaults and return shapes. ``src``, ``dst`` and
``peer`` are world ranks; groups are names. Inputs are never modified;
results are new numpy arrays unless ``out=`` (below) names one. Every function taking arrays also takes a
keyword-only ``dtype`` that reinterprets their memory (``dtype=libcomm.bfloat16``
for bfloat16 data in uint16 arrays). Blocking calls release the GIL while
they wait.

Callers who own their output buffer (as mpi4py and torch.distributed users
do) pass it as the keyword-only ``out=``: the result is written there, in
place, and returned in place of a new array (a numpy ``out`` is returned
itself; another buffer, such as a torch tensor, as a numpy view of its
memory). ``out`` must have the result's shape (ValueError) and dtype
(TypeError), be writable and C-contiguous (ValueError); it may be the input
itself where the collective allows (all_reduce, broadcast, recv).

Beyond comm_func: AVG and the bitwise reduce ops, tags in batches,
``all_gather_into_tensor_uneven`` / ``reduce_scatter_tensor_uneven``, and
``CommHandle.wait(timeout=...)`` / ``CommHandle.is_completed()``.
"""

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _comm_swig as _c
from .arrays import Array, CudaArray, DTypeLike, Tensor, TensorLike, as_output, as_tensor, new_like, user_array
from .handle import CommHandle
from .management import WORLD_COMM_GROUP, Group, group_of
from .ops import ReduceOp, op_code

__all__ = [
    "CommHandle",
    "all_reduce",
    "all_gather_into_tensor",
    "all_gather_into_tensor_uneven",
    "reduce_scatter_tensor",
    "reduce_scatter_tensor_uneven",
    "reduce",
    "broadcast",
    "scatter_tensor",
    "gather_into_tensor",
    "barrier",
    "send",
    "recv",
    "isend",
    "irecv",
    "P2POp",
    "batch_isend_irecv",
    "all_to_all_with_output_shape",
    "all_to_all_single_with_output_shape",
]


# --- helpers ------------------------------------------------------------------
# A "tensor" below is the pair (ndarray, comm dtype) the C wrapper takes.

Shape = tuple[int, ...]
#: An output shape: a tuple or list of ints, or an array whose shape it is.
ShapeLike = Sequence[int] | Array
#: What a reduce op is given as: a ReduceOp or its string ("sum").
OpLike = ReduceOp | str


def _input(obj: TensorLike, dtype: DTypeLike | None, call: str) -> Tensor:
    try:
        return as_tensor(obj, dtype)
    except TypeError as error:
        raise TypeError(f"For {call}, {error}") from None


def _new(shape: Shape, like: Tensor) -> Tensor:
    """A new tensor of ``shape`` with the dtype of tensor ``like``, in its
    memory (a CUDA input gets a CUDA result of its own library)."""
    return new_like(shape, like)


def _output(out: TensorLike | None, shape: Shape, like: Tensor, dtype: DTypeLike | None, call: str) -> Tensor:
    """Where a result of ``shape`` and ``like``'s dtype goes: a new tensor, or
    the caller's ``out`` (read with the call's ``dtype``) once it is checked
    to be one the C library can write in place."""
    if out is None:
        return _new(shape, like)
    try:
        tensor = as_output(out, dtype)
    except TypeError as error:
        raise TypeError(f"For {call}, out: {error}") from None
    except ValueError as error:
        raise ValueError(f"For {call}, out can not take the result: {error}") from None
    array, code = tensor
    if code != like[1] or array.dtype != like[0].dtype:
        raise TypeError(f"For {call}, out has dtype {_c.comm_dtype_name(code)} ({array.dtype}) but the result is "
                        f"{_c.comm_dtype_name(like[1])} ({like[0].dtype})")
    if array.shape != tuple(shape):
        raise ValueError(f"For {call}, out has shape {array.shape} but the result has shape {tuple(shape)}")
    return tensor


def _stream_of(args: tuple[Any, ...]) -> int | None:
    """The CUDA stream a CUDA array of the call names, if any."""
    for arg in args:
        for item in arg if isinstance(arg, list) else (arg,):
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], CudaArray):
                if item[0].stream is not None:
                    return item[0].stream
    return None


def _returned(result: Any) -> Any:
    """What the caller gets for ``result``: its own CUDA arrays, numpy arrays."""
    if isinstance(result, tuple):
        return tuple(user_array(r) for r in result)
    return user_array(result)


def _start(function: Callable[..., Any], args: tuple[Any, ...], async_op: bool,
           result: Any) -> tuple[Any, CommHandle | None]:
    """Call ``function(*args, handle)``: (result, CommHandle or None).

    The handle keeps ``args`` (and so every array of the call) alive until
    the operation completes. A CUDA array that names a stream orders the
    call on it (comm_set_stream around the call, on its communicator
    ``args[0]``): it then returns at once, and later work on that stream
    sees the result.
    """
    result = _returned(result)
    stream = _stream_of(args)
    if stream is not None:
        _c.comm_set_stream(args[0], stream)
    try:
        if async_op:
            return result, CommHandle(function(*args, True), args)
        function(*args, False)
        return result, None
    finally:
        if stream is not None:
            _c.comm_set_stream(args[0], 0)


def _rows(shape: Shape) -> int:
    return shape[0] if shape else 1


def _stacked_shape(shape: Shape, blocks: int) -> Shape:
    """The shape of ``blocks`` arrays of ``shape`` concatenated along dim 0."""
    return (blocks * _rows(shape),) + shape[1:]


def _split_shape(shape: Shape, blocks: int, call: str) -> Shape:
    """The shape of one of ``blocks`` equal dim-0 blocks of ``shape``."""
    if _rows(shape) % blocks:
        raise ValueError(f"For {call}, dim 0 of the input ({_rows(shape)}) must divide by the group size {blocks}")
    return (_rows(shape) // blocks,) + shape[1:]


def _root_output(group: Group, root: int, shape: Shape, like: Tensor, out: TensorLike | None,
                 dtype: DTypeLike | None, call: str) -> tuple[Tensor | None, Array]:
    """(The output tensor on ``root``, None elsewhere: the C call's NULL;
    what the call returns). The result is a new array on the root and
    comm_func's meaningless [0] elsewhere, or ``out`` on every rank when
    given: checked everywhere, so that a wrong one fails on every rank, and
    written on the root only."""
    if out is not None:
        tensor = _output(out, shape, like, dtype, call)
        return (tensor if group.rank == root else None), tensor[0]
    if group.rank == root:
        tensor = _new(shape, like)
        return tensor, tensor[0]
    return None, np.zeros(1, like[0].dtype)


def _tag(tag: int, call: str) -> int:
    if not isinstance(tag, numbers.Integral):
        raise TypeError(f"For {call}, tag must be int, not {type(tag).__name__}")
    if not 0 <= tag <= _c.COMM_TAG_MAX:
        raise ValueError(f"For {call}, tag {tag} is outside 0..{_c.COMM_TAG_MAX}")
    return int(tag)


def _shape_of(spec: ShapeLike, call: str) -> Shape:
    """An output shape given as a tuple/list of ints or as an array (its shape)."""
    if isinstance(spec, (tuple, list)):
        for extent in spec:
            if not isinstance(extent, numbers.Integral):
                raise TypeError(f"For {call}, a shape holds int, not {type(extent).__name__}")
        return tuple(int(extent) for extent in spec)
    shape = getattr(spec, "shape", None)
    if shape is None:
        raise TypeError(f"For {call}, an output shape is a tuple, a list or an array, not {type(spec).__name__}")
    return tuple(shape)


def _split_sizes(sizes: Sequence[int] | None, blocks: int, rows: int | None, what: str,
                 call: str) -> tuple[int, ...] | None:
    """Row counts per rank as the C call takes them. None or empty ``sizes``
    mean an even split of ``rows`` (checked unless ``rows`` is None) and give
    None; else ``blocks`` ints adding up to ``rows`` (when given), as a tuple."""
    if sizes is not None and not isinstance(sizes, (tuple, list)):
        raise TypeError(f"For {call}, {what}_split_sizes must be a tuple or list, not {type(sizes).__name__}")
    if not sizes:
        if rows is not None and rows % blocks:
            raise ValueError(f"For {call}, {what} shape at dim 0 ({rows}) must divide by the group size {blocks}")
        return None
    for size in sizes:
        if not isinstance(size, numbers.Integral):
            raise TypeError(f"For {call}, {what}_split_sizes holds int, not {type(size).__name__}")
    if len(sizes) != blocks:
        raise ValueError(f"For {call}, {what}_split_sizes has {len(sizes)} entries for a group of {blocks}")
    if rows is not None and sum(sizes) != rows:
        raise ValueError(f"For {call}, {what}_split_sizes adds up to {sum(sizes)} rows, not {rows}")
    return tuple(int(size) for size in sizes)


# --- collectives -----------------------------------------------------------------


def all_reduce(tensor: TensorLike, op: OpLike = ReduceOp.SUM, group: str | None = WORLD_COMM_GROUP,
               async_op: bool = False, *, dtype: DTypeLike | None = None,
               out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """``op`` over ``tensor`` of every rank of ``group``: (result, handle or None).
    ``out`` may be ``tensor`` itself (in place)."""
    call = "all_reduce"
    comm = group_of(group, call).comm
    src = _input(tensor, dtype, call)
    dst = _output(out, src[0].shape, src, dtype, call)
    return _start(_c.comm_all_reduce, (comm, src, dst, op_code(op, call)), async_op, dst[0])


def all_gather_into_tensor(tensor: TensorLike, group: str | None = WORLD_COMM_GROUP, async_op: bool = False, *,
                           dtype: DTypeLike | None = None,
                           out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """Every rank's ``tensor`` concatenated along dim 0 in rank order: (result, handle or None)."""
    call = "all_gather_into_tensor"
    g = group_of(group, call)
    src = _input(tensor, dtype, call)
    dst = _output(out, _stacked_shape(src[0].shape, g.size), src, dtype, call)
    return _start(_c.comm_all_gather, (g.comm, src, dst), async_op, dst[0])


def all_gather_into_tensor_uneven(tensor: TensorLike, output_split_sizes: Sequence[int] | None = None,
                                  group: str | None = WORLD_COMM_GROUP, async_op: bool = False, *,
                                  dtype: DTypeLike | None = None,
                                  out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """Like all_gather_into_tensor, rank r contributing output_split_sizes[r]
    rows (the same list on every rank; None: equal)."""
    call = "all_gather_into_tensor_uneven"
    g = group_of(group, call)
    src = _input(tensor, dtype, call)
    shape = src[0].shape
    counts = _split_sizes(output_split_sizes, g.size, None, "output", call) or (_rows(shape),) * g.size
    if counts[g.rank] != _rows(shape):
        raise ValueError(f"For {call}, output_split_sizes[{g.rank}] is {counts[g.rank]} but this rank's input "
                         f"has {_rows(shape)} rows")
    dst = _output(out, (sum(counts),) + shape[1:], src, dtype, call)
    return _start(_c.comm_all_gather_v, (g.comm, src, dst, counts), async_op, dst[0])


def reduce_scatter_tensor(tensor: TensorLike, op: OpLike = ReduceOp.SUM, group: str | None = WORLD_COMM_GROUP,
                          async_op: bool = False, *, dtype: DTypeLike | None = None,
                          out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """``op`` over every rank's ``tensor``; rank r gets the r-th of the group
    size's equal dim-0 blocks: (result, handle or None)."""
    call = "reduce_scatter_tensor"
    g = group_of(group, call)
    src = _input(tensor, dtype, call)
    dst = _output(out, _split_shape(src[0].shape, g.size, call), src, dtype, call)
    return _start(_c.comm_reduce_scatter, (g.comm, src, dst, op_code(op, call)), async_op, dst[0])


def reduce_scatter_tensor_uneven(tensor: TensorLike, input_split_sizes: Sequence[int] | None = None,
                                 op: OpLike = ReduceOp.SUM, group: str | None = WORLD_COMM_GROUP,
                                 async_op: bool = False, *, dtype: DTypeLike | None = None,
                                 out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """Like reduce_scatter_tensor, rank r getting input_split_sizes[r] rows
    (the same list on every rank; None: equal)."""
    call = "reduce_scatter_tensor_uneven"
    g = group_of(group, call)
    src = _input(tensor, dtype, call)
    shape = src[0].shape
    counts = _split_sizes(input_split_sizes, g.size, _rows(shape), "input", call)
    counts = counts or (_rows(shape) // g.size,) * g.size
    dst = _output(out, (counts[g.rank],) + shape[1:], src, dtype, call)
    return _start(_c.comm_reduce_scatter_v, (g.comm, src, dst, counts, op_code(op, call)), async_op, dst[0])


def reduce(tensor: TensorLike, dst: int, op: OpLike = ReduceOp.SUM, group: str | None = WORLD_COMM_GROUP, *,
           dtype: DTypeLike | None = None, out: TensorLike | None = None) -> Array:
    """``op`` over every rank's ``tensor``, on world rank ``dst``; the other
    ranks get an array of shape [1] with no meaning, as in comm_func. With
    ``out``, the result is written there on ``dst`` (other ranks' ``out`` is
    left as it is) and returned on every rank."""
    call = "reduce"
    g = group_of(group, call)
    root = g.group_rank(dst, "dst", call)
    src = _input(tensor, dtype, call)
    target, result = _root_output(g, root, src[0].shape, src, out, dtype, call)
    _c.comm_reduce(g.comm, src, target, op_code(op, call), root, False)
    return result


def broadcast(tensor: TensorLike, src: int = 0, group: str | None = WORLD_COMM_GROUP, *, dtype: DTypeLike | None = None,
              out: TensorLike | None = None) -> Array:
    """World rank ``src``'s ``tensor`` on every rank (elsewhere ``tensor``
    only gives shape and dtype). ``out`` may be ``tensor`` itself, as in
    torch.distributed.broadcast."""
    call = "broadcast"
    g = group_of(group, call)
    root = g.group_rank(src, "src", call)
    data = _input(tensor, dtype, call)
    dst = _output(out, data[0].shape, data, dtype, call)
    _c.comm_broadcast(g.comm, data if g.rank == root else None, dst, root, False)
    return dst[0]


def scatter_tensor(tensor: TensorLike, src: int = 0, group: str | None = WORLD_COMM_GROUP, *,
                   dtype: DTypeLike | None = None, out: TensorLike | None = None) -> Array:
    """Rank r gets the r-th of the group size's equal dim-0 blocks of world
    rank ``src``'s ``tensor`` (elsewhere ``tensor`` only gives shape and dtype)."""
    call = "scatter_tensor"
    g = group_of(group, call)
    root = g.group_rank(src, "src", call)
    data = _input(tensor, dtype, call)
    dst = _output(out, _split_shape(data[0].shape, g.size, call), data, dtype, call)
    _c.comm_scatter(g.comm, data if g.rank == root else None, dst, root, False)
    return dst[0]


def gather_into_tensor(tensor: TensorLike, dst: int = 0, group: str | None = WORLD_COMM_GROUP, *,
                       dtype: DTypeLike | None = None, out: TensorLike | None = None) -> Array:
    """Every rank's ``tensor`` concatenated along dim 0, on world rank
    ``dst``; the other ranks get an array of shape [1] with no meaning. With
    ``out``, as for reduce."""
    call = "gather_into_tensor"
    g = group_of(group, call)
    root = g.group_rank(dst, "dst", call)
    data = _input(tensor, dtype, call)
    target, result = _root_output(g, root, _stacked_shape(data[0].shape, g.size), data, out, dtype, call)
    _c.comm_gather(g.comm, data, target, root, False)
    return result


def barrier(group: str | None = WORLD_COMM_GROUP) -> None:
    """Return once every rank of ``group`` has called barrier."""
    _c.comm_barrier(group_of(group, "barrier").comm, False)


def all_to_all_with_output_shape(output_shape_list: Sequence[ShapeLike], input_tensor_list: Sequence[TensorLike],
                                 group: str | None = None, async_op: bool = False, *,
                                 dtype: DTypeLike | None = None,
                                 out: Sequence[TensorLike] | None = None
                                 ) -> tuple[tuple[Array, ...], CommHandle | None]:
    """Send input_tensor_list[p] to rank p and receive from rank p an array of
    output_shape_list[p] (a shape or an array giving one): (tuple of
    results, handle or None). Inputs share one dtype, which outputs take.
    ``out``, a list or tuple of one array per rank, receives them instead."""
    call = "all_to_all_with_output_shape"
    for name, value in (("input_tensor_list", input_tensor_list), ("output_shape_list", output_shape_list)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"For {call}, {name} must be a list or tuple, not {type(value).__name__}")
    if out is not None and not isinstance(out, (list, tuple)):
        raise TypeError(f"For {call}, out must be a list or tuple of arrays, not {type(out).__name__}")
    g = group_of(group, call)
    ins = [_input(t, dtype, call) for t in input_tensor_list]
    if len({code for _, code in ins}) > 1:
        names = ", ".join(sorted({_c.comm_dtype_name(code) for _, code in ins}))
        raise TypeError(f"For {call}, all_to_all input dtype must be the same, but got {names}")
    if len(ins) != g.size or len(output_shape_list) != g.size or (out is not None and len(out) != g.size):
        raise ValueError(f"For {call}, input_tensor_list has {len(ins)} entries, output_shape_list "
                         f"{len(output_shape_list)}{'' if out is None else f' and out {len(out)}'}; the group has "
                         f"{g.size} ranks")
    targets = [None] * g.size if out is None else list(out)
    outs = [_output(target, _shape_of(shape, call), ins[0], dtype, call)
            for target, shape in zip(targets, output_shape_list)]
    return _start(_c.comm_all_to_all, (g.comm, ins, outs), async_op, tuple(tensor[0] for tensor in outs))


def all_to_all_single_with_output_shape(output_shape: ShapeLike, tensor: TensorLike,
                                        output_split_sizes: Sequence[int] | None = None,
                                        input_split_sizes: Sequence[int] | None = None, group: str | None = None,
                                        async_op: bool = False, *, dtype: DTypeLike | None = None,
                                        out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """Send rows of ``tensor`` (input_split_sizes[p] of them, or an equal
    share) to each rank p and gather what every rank sends here into an
    array of ``output_shape``: (result, handle or None)."""
    call = "all_to_all_single_with_output_shape"
    g = group_of(group, call)
    src = _input(tensor, dtype, call)
    shape = _shape_of(output_shape, call)
    in_splits = _split_sizes(input_split_sizes, g.size, _rows(src[0].shape), "input", call)
    out_splits = _split_sizes(output_split_sizes, g.size, _rows(shape), "output", call)
    dst = _output(out, shape, src, dtype, call)
    return _start(_c.comm_all_to_all_single, (g.comm, src, dst, out_splits, in_splits), async_op, dst[0])


# --- point-to-point -------------------------------------------------------------


def _send(tensor: TensorLike, dst: int, group: str | None, tag: int, dtype: DTypeLike | None, async_op: bool,
          call: str) -> CommHandle | None:
    """None when blocking, else the handle."""
    g = group_of(group, call)
    args = (g.comm, _input(tensor, dtype, call), g.group_rank(dst, "dst", call), _tag(tag, call))
    return _start(_c.comm_send, args, async_op, None)[1]


def _recv(tensor: TensorLike, src: int, group: str | None, tag: int, dtype: DTypeLike | None, async_op: bool, call: str,
          out: TensorLike | None) -> tuple[Array, CommHandle | None]:
    g = group_of(group, call)
    template = _input(tensor, dtype, call)
    dst = _output(out, template[0].shape, template, dtype, call)
    args = (g.comm, dst, g.group_rank(src, "src", call), _tag(tag, call))
    return _start(_c.comm_recv, args, async_op, dst[0])


def send(tensor: TensorLike, dst: int = 0, group: str | None = WORLD_COMM_GROUP, tag: int = 0, *,
         dtype: DTypeLike | None = None) -> None:
    """Send ``tensor`` to world rank ``dst``; returns once it is on its way."""
    _send(tensor, dst, group, tag, dtype, False, "send")


def recv(tensor: TensorLike, src: int = 0, group: str | None = WORLD_COMM_GROUP, tag: int = 0, *,
         dtype: DTypeLike | None = None, out: TensorLike | None = None) -> Array:
    """Receive from world rank ``src`` a new array shaped like ``tensor`` (or
    into ``out``, which may be ``tensor`` itself)."""
    return _recv(tensor, src, group, tag, dtype, False, "recv", out)[0]


def isend(tensor: TensorLike, dst: int = 0, group: str | None = WORLD_COMM_GROUP, tag: int = 0, *,
          dtype: DTypeLike | None = None) -> CommHandle:
    """Start sending ``tensor`` to world rank ``dst``: its CommHandle."""
    handle = _send(tensor, dst, group, tag, dtype, True, "isend")
    assert handle is not None  # async_op=True always makes one
    return handle


def irecv(tensor: TensorLike, src: int = 0, group: str | None = WORLD_COMM_GROUP, tag: int = 0, *,
          dtype: DTypeLike | None = None, out: TensorLike | None = None) -> tuple[Array, CommHandle | None]:
    """Start receiving from world rank ``src``: (array shaped like ``tensor``,
    or ``out``, filled once the CommHandle is waited for; the handle)."""
    return _recv(tensor, src, group, tag, dtype, True, "irecv", out)


class P2POp:
    """One entry of batch_isend_irecv: ``op`` is "isend" / "irecv" (or the
    functions), ``peer`` a world rank. An irecv may give a shape (tuple or
    list) for ``tensor`` with ``recv_dtype``. Tags are supported."""

    __slots__ = ("op", "tensor", "peer", "group", "tag", "recv_dtype", "_spec")

    def __init__(self, op: str | Callable[..., Any], tensor: TensorLike | Sequence[int], peer: int,
                 group: str | None = None, tag: int = 0, *, recv_dtype: DTypeLike | None = None) -> None:
        call = "P2POp"
        name = op if isinstance(op, str) else getattr(op, "__name__", None)
        if name not in ("isend", "irecv"):
            raise TypeError(f"For {call}, op must be 'isend', 'irecv' or those functions, not {op!r}")
        if not isinstance(peer, numbers.Integral):
            raise TypeError(f"For {call}, peer must be int, not {type(peer).__name__}")
        if group is not None and not isinstance(group, str):
            raise TypeError(f"For {call}, group must be str, not {type(group).__name__}")
        if recv_dtype is not None:
            recv_dtype = _recv_dtype(recv_dtype, call)
        if isinstance(tensor, (tuple, list)):
            if name != "irecv":
                raise TypeError(f"For {call}, an isend needs an array, not a shape")
            if recv_dtype is None:
                raise ValueError(f"For {call}, an irecv given a shape needs recv_dtype")
            self._spec = as_tensor(np.empty(_shape_of(tensor, call), recv_dtype[0]), recv_dtype[1])
        else:
            self._spec = _input(tensor, None, call)
        self.op, self.tensor, self.peer, self.group = name, tensor, peer, group
        self.tag = _tag(tag, call)
        self.recv_dtype = recv_dtype


def _recv_dtype(dtype: DTypeLike, call: str) -> tuple[np.dtype, DTypeLike | None]:
    """(numpy dtype, dtype argument for as_tensor) of a recv_dtype."""
    if str(dtype).rsplit(".", 1)[-1] == "bfloat16":
        return np.dtype(np.uint16), dtype
    try:
        return np.dtype(dtype), None
    except TypeError:
        raise TypeError(f"For {call}, recv_dtype {dtype!r} is not a numpy dtype") from None


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> tuple[Array, ...]:
    """Run the sends and receives of ``p2p_op_list`` (P2POps of one group)
    together, without deadlock whatever the order; operations with the same
    peer match in list order. Returns one array per op: the received array
    for an irecv, a meaningless 0-d array for an isend."""
    call = "batch_isend_irecv"
    if not isinstance(p2p_op_list, list):
        raise TypeError(f"For {call}, p2p_op_list must be a list, not {type(p2p_op_list).__name__}")
    if not p2p_op_list:
        raise TypeError(f"For {call}, p2p_op_list can not be an empty list")
    for p2p in p2p_op_list:
        if not isinstance(p2p, P2POp):
            raise TypeError(f"For {call}, p2p_op_list must hold P2POp, not {type(p2p).__name__}")
    groups = {WORLD_COMM_GROUP if p2p.group is None else p2p.group for p2p in p2p_op_list}
    if len(groups) > 1:
        raise ValueError(f"For {call}, the P2POps use several groups ({', '.join(sorted(groups))}); use one")
    g = group_of(groups.pop(), call)
    results = []
    batch = _c.comm_batch_create()
    try:
        for p2p in p2p_op_list:
            peer = g.group_rank(p2p.peer, "peer", call)
            if p2p.op == "isend":
                _c.comm_batch_add_send(batch, p2p._spec, peer, p2p.tag)
                results.append(np.zeros((), p2p._spec[0].dtype))
            else:
                out = _new(p2p._spec[0].shape, p2p._spec)
                _c.comm_batch_add_recv(batch, out, peer, p2p.tag)
                results.append(out[0])
        _c.comm_batch_start(g.comm, batch, False)
    finally:
        _c.comm_batch_destroy(batch)
    return tuple(results)
