"""init, release and groups, as in ``mindspore.communication``.

Groups are names. Ranks given to and returned by these functions are world
ranks unless the name says "group rank".
"""

import atexit
import numbers
from typing import Any

from . import _comm_swig as _c
from .errors import CommError, CommInvalidUsageError
from .handle import CommHandle

__all__ = [
    "WORLD_COMM_GROUP",
    "GlobalComm",
    "GroupHandle",
    "init",
    "init_async",
    "release",
    "abort",
    "revoke",
    "failed_rank",
    "failed_ranks",
    "agree",
    "shrink",
    "shrink_async",
    "grow",
    "grow_async",
    "get_rank",
    "get_local_rank",
    "get_group_size",
    "get_local_rank_size",
    "get_node_count",
    "get_node_id",
    "create_group",
    "create_group_async",
    "create_node_group",
    "destroy_group",
    "get_world_rank_from_group_rank",
    "get_group_rank_from_world_rank",
]

#: The name of the group of every rank (the C library's world communicator).
WORLD_COMM_GROUP = "world"

# MindSpore's world group names per backend, accepted so scripts that spell
# them out run unchanged.
_WORLD_ALIASES = ("hccl_world_group", "nccl_world_group", "mccl_world_group")
_BACKENDS = (None, "comm", "hccl", "nccl", "mccl")


class GlobalComm:
    """MindSpore's ``GlobalComm``, as far as scripts read it."""

    WORLD_COMM_GROUP = WORLD_COMM_GROUP
    INITED = False


class Group:
    """A named communicator and what the Python layer asks of it per call."""

    __slots__ = ("name", "comm", "rank", "size", "group_ranks")

    def __init__(self, name: str, comm: Any) -> None:
        self.name = name
        self.comm = comm
        self.rank = _c.comm_rank(comm)
        self.size = _c.comm_size(comm)
        # world rank -> group rank, so peers translate without a C call.
        self.group_ranks = {_c.comm_rank_to_world(comm, r): r for r in range(self.size)}

    def group_rank(self, world_rank: int, what: str, call: str) -> int:
        """The group rank of ``world_rank`` (an int argument named ``what`` of ``call``)."""
        if not isinstance(world_rank, numbers.Integral):
            raise TypeError(f"For {call}, {what} must be int, not {type(world_rank).__name__}")
        try:
            return self.group_ranks[world_rank]
        except KeyError:
            raise ValueError(f"For {call}, {what} {world_rank} is not a world rank in group '{self.name}'") from None


_groups: dict[str, Group] = {}  # name -> Group; the world is there under every name it has


class GroupHandle(CommHandle):
    """What init_async, create_group_async, shrink_async and grow_async return: a
    CommHandle whose completion, seen by :meth:`wait` or
    :meth:`is_completed`, registers the group (the world for init_async).
    Until then the group's name is taken and using it raises
    CommInvalidUsageError; when the making failed, the name is free again.
    """

    __slots__ = ("_name", "_comm")

    def __init__(self, handle: Any, name: str, comm: Any) -> None:
        super().__init__(handle, None)
        self._name = name
        self._comm = comm

    def abort(self) -> None:
        """Give up the making: :meth:`wait` then raises CommAbortedError at
        once. Nothing happens when it has completed already."""
        if self._handle is not None:
            _c.comm_abort(self._comm)

    def _close(self) -> None:
        super()._close()
        comm, self._comm = self._comm, None
        del _making[self._name]
        if self._error is not None:
            _c.comm_destroy(comm)
        elif self._name == WORLD_COMM_GROUP:
            _register_world(comm)
        else:
            _groups[self._name] = Group(self._name, comm)


_making: dict[str, GroupHandle] = {}  # name -> the handle of the group being made under it


def group_of(group: str | None, call: str) -> Group:
    """The Group named ``group`` (None means the world)."""
    try:
        return _groups[WORLD_COMM_GROUP if group is None else group]
    except (KeyError, TypeError):
        pass
    if not isinstance(group, str):
        raise TypeError(f"For {call}, group must be str, not {type(group).__name__}")
    if group in _making or (group in _WORLD_ALIASES and WORLD_COMM_GROUP in _making):
        raise CommInvalidUsageError(f"For {call}, group '{group}' is still being made; wait for its handle first")
    if not _groups:
        raise RuntimeError(f"For {call}, libcomm is not initialized; call libcomm.init() first")
    raise ValueError(f"For {call}, group '{group}' does not exist; create_group() makes it")


def _check_group_name(group: str, call: str) -> None:
    if not isinstance(group, str):
        raise TypeError(f"For {call}, group must be str, not {type(group).__name__}")


def _check_backend(backend_name: str | None, call: str) -> None:
    if backend_name is not None and not isinstance(backend_name, str):
        raise TypeError(f"For {call}, backend_name must be str, not {type(backend_name).__name__}")
    if backend_name not in _BACKENDS:
        raise RuntimeError(f"For {call}, backend '{backend_name}' is unknown; use one of {_BACKENDS[1:]} or None")


def _register_world(comm: Any) -> None:
    world = Group(WORLD_COMM_GROUP, comm)
    for name in (WORLD_COMM_GROUP, *_WORLD_ALIASES):
        _groups[name] = world
    GlobalComm.INITED = True


def init(backend_name: str | None = None) -> None:
    """Join the world: every rank calls it once, under commrun, torchrun,
    msrun, srun or mpirun. ``backend_name`` is accepted for compatibility
    (MindSpore's names or "comm"); there is one backend. Calling it again
    does nothing; after init_async it waits for that handle. Settings come
    from the COMM_* environment (``comm-info`` lists them): with
    COMM_JOIN=1 this process joins a running job as a newcomer instead,
    and its world is the group the job's ranks make with grow().
    """
    _check_backend(backend_name, "init")
    if WORLD_COMM_GROUP in _making:
        _making[WORLD_COMM_GROUP].wait()
    if _groups:
        return
    _register_world(_c.comm_init(None))


def init_async(backend_name: str | None = None) -> GroupHandle | CommHandle:
    """init() without blocking: returns at once a handle whose wait() (or
    is_completed() once true) makes the world usable. Until then the world
    group raises CommInvalidUsageError; the handle's abort() gives up
    joining (wait() then raises CommAbortedError). Calling it again returns
    the same handle while the world is being joined, and a completed handle
    once it is.
    """
    _check_backend(backend_name, "init_async")
    if WORLD_COMM_GROUP in _making:
        return _making[WORLD_COMM_GROUP]
    if _groups:
        return CommHandle(None, None)
    comm, handle = _c.comm_init_async(None)
    making = _making[WORLD_COMM_GROUP] = GroupHandle(handle, WORLD_COMM_GROUP, comm)
    return making


def release() -> None:
    """Leave the world: destroy every group, then the world communicator.
    Waits for this rank's pending operations; groups still being made, and
    the world if init_async has not completed, are aborted first. Not
    collective."""
    for making in list(_making.values()):
        making.abort()
        try:
            making.wait()
        except CommError:
            pass  # aborted: the making's own failure is its handle's to report
    world = _groups.get(WORLD_COMM_GROUP)
    if world is None:
        return
    for group in {g for g in _groups.values() if g is not world}:
        _c.comm_destroy(group.comm)
    _groups.clear()
    GlobalComm.INITED = False
    _c.comm_destroy(world.comm)


atexit.register(release)


def abort(group: str | None = WORLD_COMM_GROUP) -> None:
    """Make every pending and future wait on ``group`` (on every group, for
    the world) fail with CommAbortedError. Callable from any thread while
    another waits; the group must still be destroyed (release() for the
    world)."""
    _c.comm_abort(group_of(group, "abort").comm)


def revoke(group: str | None = WORLD_COMM_GROUP) -> None:
    """Make every pending and future operation on ``group`` fail with
    CommRevokedError, on this rank and on every other live member (comm
    passes the news on; only one rank need call it). Callable from any
    thread; the group must still be destroyed."""
    _c.comm_revoke(group_of(group, "revoke").comm)


def failed_rank(group: str | None = WORLD_COMM_GROUP) -> int:
    """The world rank of the first failed rank this rank knows of, or -1:
    the rank whose end made an operation on ``group`` or another group fail
    with CommRemoteError, as this rank saw it or as commrun or another rank
    reported it. Not collective."""
    return _c.comm_failed_rank(group_of(group, "failed_rank").comm)


def failed_ranks(group: str | None = WORLD_COMM_GROUP) -> list[int]:
    """The world ranks of the members of ``group`` this rank knows to have
    failed, ascending. What this rank knows, not an agreement: agree() and
    shrink() give every live rank the same set. Not collective."""
    target = group_of(group, "failed_ranks")
    return _world_ranks(target, _c.comm_failed_ranks(target.size, target.comm))


def agree(flags: int, group: str | None = WORLD_COMM_GROUP) -> tuple[int, list[int]]:
    """Fault-tolerant agreement: every live rank of ``group`` calls it with
    its ``flags`` (0 .. 2**32 - 1), and each gets the same
    ``(flags, failed)``: the bitwise AND of the flags of the ranks that took
    part, and the world ranks, ascending, of those that did not (the others
    proved them dead). It holds when ranks die during the call. Use it to
    decide together whether a step committed. A revoked group raises
    CommRevokedError: shrink it, then agree on the new group."""
    call = "agree"
    if not isinstance(flags, numbers.Integral):
        raise TypeError(f"For {call}, flags must be int, not {type(flags).__name__}")
    if not 0 <= flags <= 0xFFFFFFFF:
        raise ValueError(f"For {call}, flags {flags} is not a 32-bit unsigned int")
    target = group_of(group, call)
    value, failed = _c.comm_agree(int(flags), target.size, target.comm)
    return value, _world_ranks(target, failed)


def shrink(group: str | None, new_group_name: str) -> None:
    """Make group ``new_group_name`` of the live ranks of ``group``: they
    agree on which ranks failed (as agree()) and the others form the new
    group, in their order in ``group``. Every live rank of ``group`` calls
    it with the same name; it needs nothing from a dead rank. ``group`` may
    be revoked (the usual way: revoke, then shrink) and is left as it was:
    destroy it after (the world stays until release()). With no failure
    the new group holds every rank of ``group``."""
    call = "shrink"
    _check_group_name(new_group_name, call)
    source = group_of(group, call)
    _check_name_free(new_group_name, call)
    _groups[new_group_name] = Group(new_group_name, _c.comm_shrink(source.comm, new_group_name))


def shrink_async(group: str | None, new_group_name: str) -> GroupHandle:
    """shrink() without blocking: returns at once a handle whose wait()
    registers ``new_group_name``. Until then that name raises
    CommInvalidUsageError, and making another group from ``group`` too;
    operations on ``group`` may run meanwhile."""
    call = "shrink_async"
    _check_group_name(new_group_name, call)
    source = group_of(group, call)
    _check_name_free(new_group_name, call)
    comm, handle = _c.comm_shrink_async(source.comm, new_group_name)
    making = _making[new_group_name] = GroupHandle(handle, new_group_name, comm)
    return making


def grow(group: str | None, count: int, new_group_name: str) -> None:
    """Make group ``new_group_name`` of the ranks of ``group`` and ``count``
    newcomers: processes started later whose init() joins with COMM_JOIN=1
    in their environment (commrun --replace starts its replacements so).
    Every rank of ``group`` calls it with the same ``count`` (1 .. 65535)
    and name. The ranks of ``group`` keep their ranks, the newcomers take
    the next ones, in the order they came; a newcomer's init() makes the
    new group its world. The new group is a world of its own: the ranks the
    functions here take and return for it are its own ranks (for a group
    grown from the world, old world ranks stay what they were). State
    transfer is the caller's (a broadcast from a rank of ``group``).
    ``group`` must have no failed rank (shrink it first) and goes on
    working: destroy it when done. Waits at most the deadline for the
    newcomers (CommTimeoutError); a rank that dies meanwhile raises
    CommRemoteError naming it; different counts raise
    CommInvalidArgumentError."""
    call = "grow"
    _check_count(count, call)
    _check_group_name(new_group_name, call)
    source = group_of(group, call)
    _check_name_free(new_group_name, call)
    _groups[new_group_name] = Group(new_group_name, _c.comm_grow(source.comm, int(count), new_group_name))


def grow_async(group: str | None, count: int, new_group_name: str) -> GroupHandle:
    """grow() without blocking: returns at once a handle whose wait()
    registers ``new_group_name``. Until then that name raises
    CommInvalidUsageError, and making another group from ``group`` too;
    operations on ``group`` may run meanwhile (the newcomers may start
    after this returns)."""
    call = "grow_async"
    _check_count(count, call)
    _check_group_name(new_group_name, call)
    source = group_of(group, call)
    _check_name_free(new_group_name, call)
    comm, handle = _c.comm_grow_async(source.comm, int(count), new_group_name)
    making = _making[new_group_name] = GroupHandle(handle, new_group_name, comm)
    return making


def _check_count(count: int, call: str) -> None:
    # The range is the C library's to judge (CommInvalidArgumentError).
    if not isinstance(count, numbers.Integral):
        raise TypeError(f"For {call}, count must be int, not {type(count).__name__}")


def _check_name_free(group: str, call: str) -> None:
    if group in _groups or group in _making:
        raise ValueError(f"For {call}, group '{group}' exists already")


def _world_ranks(target: Group, ranks: list[int]) -> list[int]:
    """The world ranks of ``target``'s group ranks ``ranks``, ascending."""
    return sorted(_c.comm_rank_to_world(target.comm, r) for r in ranks)


def get_rank(group: str | None = WORLD_COMM_GROUP) -> int:
    """This process's rank in ``group``."""
    return group_of(group, "get_rank").rank


def get_group_size(group: str | None = WORLD_COMM_GROUP) -> int:
    """The number of ranks in ``group``."""
    return group_of(group, "get_group_size").size


def get_local_rank(group: str | None = WORLD_COMM_GROUP) -> int:
    """This process's rank among the ranks of ``group`` on its node."""
    return _c.comm_local_rank(group_of(group, "get_local_rank").comm)


def get_local_rank_size(group: str | None = WORLD_COMM_GROUP) -> int:
    """The number of ranks of ``group`` on this node."""
    return _c.comm_local_size(group_of(group, "get_local_rank_size").comm)


def get_node_count(group: str | None = WORLD_COMM_GROUP) -> int:
    """The number of nodes (hosts) the ranks of ``group`` are on."""
    return _c.comm_node_count(group_of(group, "get_node_count").comm)


def get_node_id(group: str | None = WORLD_COMM_GROUP) -> int:
    """This rank's node in ``group``, 0 .. get_node_count(group) - 1; nodes
    are numbered in the order of their lowest rank."""
    return _c.comm_node_id(group_of(group, "get_node_id").comm)


def create_group(group: str, rank_ids: list[int]) -> None:
    """Make group ``group`` of the world ranks ``rank_ids`` (group rank i is
    rank_ids[i]). Called by the member ranks only, all with the same list."""
    call = "create_group"
    world = _check_group_args(group, rank_ids, call)
    _groups[group] = Group(group, _c.comm_group_create(world.comm, [int(r) for r in rank_ids], group))


def create_group_async(group: str, rank_ids: list[int]) -> GroupHandle:
    """create_group() without blocking: returns at once a handle whose
    wait() registers ``group``. Until then ``group`` raises
    CommInvalidUsageError, and making another group meanwhile too (wait
    for the first); collectives on the world may run meanwhile."""
    call = "create_group_async"
    world = _check_group_args(group, rank_ids, call)
    comm, handle = _c.comm_group_create_async(world.comm, [int(r) for r in rank_ids], group)
    making = _making[group] = GroupHandle(handle, group, comm)
    return making


def _check_group_args(group: str, rank_ids: list[int], call: str) -> Group:
    """Check create_group's arguments; the world."""
    _check_group_name(group, call)
    if not isinstance(rank_ids, list):
        raise TypeError(f"For {call}, rank_ids must be a list, not {type(rank_ids).__name__}")
    for rank in rank_ids:
        if not isinstance(rank, numbers.Integral):
            raise TypeError(f"For {call}, rank_ids must hold int, not {type(rank).__name__}")
    if len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"For {call}, rank_ids {rank_ids} holds a rank twice")
    if len(rank_ids) < 2:
        raise ValueError(f"For {call}, rank_ids {rank_ids} must hold at least 2 ranks")
    world = group_of(WORLD_COMM_GROUP, call)
    _check_name_free(group, call)
    return world


def create_node_group(group: str, parent: str | None = WORLD_COMM_GROUP) -> None:
    """Make group ``group`` of the ranks of ``parent`` on this rank's node,
    in ``parent``'s rank order. Collective: every rank of ``parent`` calls
    it with the same name, and each gets its own node's group."""
    call = "create_node_group"
    _check_group_name(group, call)
    source = group_of(parent, call)
    _check_name_free(group, call)
    _groups[group] = Group(group, _c.comm_split_by_node(source.comm, group))


def destroy_group(group: str) -> None:
    """Destroy group ``group``; its name may then be used again. Not collective."""
    call = "destroy_group"
    _check_group_name(group, call)
    target = group_of(group, call)
    if target is _groups[WORLD_COMM_GROUP]:
        raise ValueError(f"For {call}, the world group cannot be destroyed; release() leaves the world")
    del _groups[group]
    _c.comm_destroy(target.comm)


def get_world_rank_from_group_rank(group: str, group_rank_id: int) -> int:
    """The world rank of rank ``group_rank_id`` of ``group``."""
    call = "get_world_rank_from_group_rank"
    _check_group_name(group, call)
    if not isinstance(group_rank_id, numbers.Integral):
        raise TypeError(f"For {call}, group_rank_id must be int, not {type(group_rank_id).__name__}")
    return _c.comm_rank_to_world(group_of(group, call).comm, int(group_rank_id))


def get_group_rank_from_world_rank(world_rank_id: int, group: str) -> int:
    """The rank in ``group`` of world rank ``world_rank_id``."""
    call = "get_group_rank_from_world_rank"
    _check_group_name(group, call)
    return group_of(group, call).group_rank(world_rank_id, "world_rank_id", call)
