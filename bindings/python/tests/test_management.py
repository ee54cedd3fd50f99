"""init, ranks and groups by name."""

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import libcomm as comm
from grow_newcomer import check_grown
from reference import assert_same


def test_version_features_and_providers():
    C = comm._comm_swig
    C.comm_check_version(C.COMM_VERSION_MAJOR, C.COMM_VERSION_MINOR)
    with pytest.raises(comm.CommNotSupportedError, match="comm_check_version"):
        C.comm_check_version(C.COMM_VERSION_MAJOR + 1, 0)
    assert comm.has_cuda() == bool(C.comm_has_feature(C.COMM_FEATURE_CUDA))
    built = os.environ.get("COMM_TEST_BUILT_WITH_CUDA")
    if built is not None:  # what CMake was asked to build
        assert comm.has_cuda() == (built == "1")
    devices, reason = comm.cuda_device_count()
    assert devices >= 0 and (devices == 0) == (reason != "")
    if not comm.has_cuda():
        assert devices == 0 and "no CUDA" in reason
    assert C.comm_providers().split(",")[0] == "tcp"


def test_world(rank, size):
    assert comm.get_rank() == int(os.environ["COMM_RANK"])
    assert comm.get_group_size() == int(os.environ["COMM_WORLD_SIZE"])
    assert comm.get_local_rank() == int(os.environ["COMM_LOCAL_RANK"])
    assert comm.get_local_rank_size() == int(os.environ["COMM_LOCAL_WORLD_SIZE"])
    assert comm.get_rank(comm.WORLD_COMM_GROUP) == rank
    assert comm.WORLD_COMM_GROUP == "world"
    comm.init()  # a second init changes nothing
    assert comm.get_group_size() == size
    assert comm.GlobalComm.INITED


def test_group_of_every_other_rank(rank, size):
    members = list(range(0, size, 2)) if size > 2 else [1, 0]
    name = "every-other"
    if rank in members:
        comm.create_group(name, members)
        me = members.index(rank)
        assert comm.get_rank(name) == me
        assert comm.get_group_size(name) == len(members)
        assert comm.get_local_rank_size(name) == len(members)
        assert 0 <= comm.get_local_rank(name) < len(members)
        for group_rank, world_rank in enumerate(members):
            assert comm.get_world_rank_from_group_rank(name, group_rank) == world_rank
            assert comm.get_group_rank_from_world_rank(world_rank, name) == group_rank
        out, _ = comm.all_reduce(np.array([rank], np.int64), group=name)
        assert_same(out, np.array([sum(members)], np.int64))
        # src/dst are world ranks even in a group
        out = comm.broadcast(np.array([rank * 3]), src=members[-1], group=name)
        assert_same(out, np.array([members[-1] * 3]))
        out = comm.gather_into_tensor(np.array([rank]), dst=members[-1], group=name)
        if rank == members[-1]:
            assert_same(out, np.array(members))
        comm.barrier(name)
        comm.destroy_group(name)
        with pytest.raises(ValueError, match=name):
            comm.get_rank(name)
    comm.barrier()


def test_destroyed_name_can_be_used_again(rank, size):
    members = [size - 1, 0]
    if rank in members:
        for round_ in range(2):
            comm.create_group("again", members)
            out, _ = comm.all_reduce(np.array([round_ + 1]), group="again")
            assert_same(out, np.array([2 * (round_ + 1)]))
            comm.destroy_group("again")
    comm.barrier()


def test_create_group_checks(rank, size):
    with pytest.raises(ValueError):
        comm.create_group("one", [0])
    with pytest.raises(ValueError):
        comm.create_group("dup", [0, 0])
    with pytest.raises(TypeError):
        comm.create_group(5, [0, 1])
    with pytest.raises(TypeError):
        comm.create_group("tuple", (0, 1))
    with pytest.raises(ValueError):
        comm.create_group(comm.WORLD_COMM_GROUP, [0, 1])
    with pytest.raises(ValueError):
        comm.destroy_group(comm.WORLD_COMM_GROUP)
    with pytest.raises(ValueError, match="no-such-group"):
        comm.destroy_group("no-such-group")
    with pytest.raises(ValueError):
        comm.get_group_rank_from_world_rank(size, comm.WORLD_COMM_GROUP)
    with pytest.raises(TypeError):
        comm.get_group_rank_from_world_rank("0", comm.WORLD_COMM_GROUP)


def test_init_checks_backend_name():
    with pytest.raises(TypeError):
        comm.init(3)
    with pytest.raises(RuntimeError):
        comm.init("gloo")
    comm.init("hccl")


def test_failed_ranks_agree_and_shrink_with_no_failure(rank, size):
    assert comm.failed_rank() == -1
    assert comm.failed_ranks() == []
    expected = 0xFF
    for r in range(size):
        expected &= ~(1 << r)
    assert comm.agree(~(1 << rank) & 0xFF) == (expected, [])
    assert comm.agree(0xFFFFFFFF) == (0xFFFFFFFF, [])  # all 32 bits travel
    comm.shrink(comm.WORLD_COMM_GROUP, "shrunk")
    try:
        assert comm.get_rank("shrunk") == rank
        assert comm.get_group_size("shrunk") == size
        for group_rank in range(size):
            assert comm.get_world_rank_from_group_rank("shrunk", group_rank) == group_rank
        out, _ = comm.all_reduce(np.array([rank + 1], np.int64), group="shrunk")
        assert_same(out, np.array([size * (size + 1) // 2], np.int64))
        assert comm.failed_ranks("shrunk") == []
        assert comm.agree(~(1 << rank) & 0xFF, "shrunk") == (expected, [])
    finally:
        comm.destroy_group("shrunk")
    comm.barrier()


def test_agree_and_shrink_of_a_group_name_world_ranks(rank, size):
    members = [size - 1, 0]  # group rank 0 is the last world rank
    if rank in members:
        comm.create_group("pair", members)
        assert comm.agree(1 << rank, "pair") == (0, [])
        assert comm.failed_ranks("pair") == []
        comm.shrink("pair", "pair-shrunk")
        assert comm.get_rank("pair-shrunk") == members.index(rank)
        assert comm.get_world_rank_from_group_rank("pair-shrunk", 0) == size - 1
        out, _ = comm.all_reduce(np.array([rank]), group="pair-shrunk")
        assert_same(out, np.array([size - 1]))
        comm.destroy_group("pair")  # the shrunk group does not need it
        comm.barrier("pair-shrunk")
        comm.destroy_group("pair-shrunk")
    comm.barrier()


def test_agree_on_a_revoked_group_raises_and_shrink_still_works(rank, size):
    name = "to-revoke"
    comm.shrink(comm.WORLD_COMM_GROUP, name)  # a copy of the world
    try:
        comm.barrier(name)  # every rank has the group before any revokes it
        comm.revoke(name)
        with pytest.raises(comm.CommRevokedError, match="comm_agree"):
            comm.agree(1, name)
        comm.shrink(name, "after-revoke")
        try:
            out, _ = comm.all_reduce(np.array([rank + 1], np.int64), group="after-revoke")
            assert_same(out, np.array([size * (size + 1) // 2], np.int64))
            assert comm.agree(3, "after-revoke") == (3, [])
        finally:
            comm.destroy_group("after-revoke")
    finally:
        comm.destroy_group(name)
    comm.barrier()


def test_failed_ranks_agree_and_shrink_checks(rank, size):
    with pytest.raises(TypeError):
        comm.agree("1")
    with pytest.raises(ValueError):
        comm.agree(-1)
    with pytest.raises(ValueError):
        comm.agree(1 << 32)
    with pytest.raises(ValueError, match="no-such-group"):
        comm.failed_ranks("no-such-group")
    with pytest.raises(ValueError, match="no-such-group"):
        comm.shrink("no-such-group", "new")
    with pytest.raises(ValueError, match="exists already"):
        comm.shrink(comm.WORLD_COMM_GROUP, comm.WORLD_COMM_GROUP)
    with pytest.raises(TypeError):
        comm.shrink(comm.WORLD_COMM_GROUP, 5)
    C = comm._comm_swig
    world = comm.management.group_of(comm.WORLD_COMM_GROUP, "test")
    with pytest.raises(comm.CommInvalidArgumentError, match="capacity"):
        C.comm_failed_ranks(-1, world.comm)
    with pytest.raises(OverflowError):
        C.comm_agree(1 << 32, size, world.comm)


def test_group_and_shrink_made_without_blocking(rank, size):
    members = list(reversed(range(size)))
    making = comm.create_group_async("reversed-async", members)
    with pytest.raises(comm.CommInvalidUsageError, match="still being made"):
        comm.get_rank("reversed-async")
    with pytest.raises(ValueError, match="exists already"):
        comm.create_group_async("reversed-async", members)
    # Collectives on the world go on meanwhile.
    out, _ = comm.all_reduce(np.array([rank], np.int64))
    assert_same(out, np.array([size * (size - 1) // 2], np.int64))
    making.wait()
    assert making.is_completed()
    making.wait()  # again: nothing more
    assert comm.get_rank("reversed-async") == size - 1 - rank
    assert comm.get_world_rank_from_group_rank("reversed-async", 0) == size - 1
    out, _ = comm.all_reduce(np.array([rank + 1], np.int64), group="reversed-async")
    assert_same(out, np.array([size * (size + 1) // 2], np.int64))

    shrinking = comm.shrink_async("reversed-async", "shrunk-async")
    with pytest.raises(comm.CommInvalidUsageError, match="still being made"):
        comm.get_group_size("shrunk-async")
    while not shrinking.is_completed():
        time.sleep(0.001)
    assert comm.get_rank("shrunk-async") == size - 1 - rank
    out, _ = comm.all_reduce(np.array([10 * rank], np.int64), group="shrunk-async")
    assert_same(out, np.array([10 * size * (size - 1) // 2], np.int64))
    comm.destroy_group("reversed-async")
    comm.destroy_group("shrunk-async")


def test_abort_of_a_group_being_made(rank, size):
    # Rank 0 comes late: the others' making cannot end before it comes.
    members = list(range(size))
    if rank != 0:
        making = comm.create_group_async("late", members)
        assert not making.is_completed()
        with pytest.raises(comm.CommInvalidUsageError, match="another communicator is being made"):
            comm.shrink_async(comm.WORLD_COMM_GROUP, "second")
        making.abort()
        with pytest.raises(comm.CommAbortedError, match="aborted while it was being made"):
            making.wait()
        with pytest.raises(comm.CommAbortedError):
            making.wait()  # the same failure again
        with pytest.raises(ValueError, match="does not exist"):
            comm.get_rank("late")
    else:
        time.sleep(0.3)
        comm.create_group("late", members)  # needs the others' abandoned makings
        assert comm.get_group_size("late") == size
        comm.destroy_group("late")
    out, _ = comm.all_reduce(np.array([rank], np.int64))
    assert_same(out, np.array([size * (size - 1) // 2], np.int64))


def test_async_making_checks(rank, size):
    with pytest.raises(TypeError, match="group must be str"):
        comm.create_group_async(3, [0, 1])
    with pytest.raises(ValueError, match="exists already"):
        comm.shrink_async(comm.WORLD_COMM_GROUP, comm.WORLD_COMM_GROUP)
    with pytest.raises(ValueError, match="does not exist"):
        comm.shrink_async("no-such-group", "x")


@contextlib.contextmanager
def newcomer_on_rank_0(rank, slot):
    """On rank 0, a process that joins the job (COMM_JOIN=1) as
    grow_newcomer.py, with launch slot ``slot`` (no rank of the job has it);
    it must have exited 0 by the end of the block."""
    script = os.path.join(os.path.dirname(__file__), "grow_newcomer.py")
    env = dict(os.environ, COMM_JOIN="1", COMM_LAUNCH_SLOT=str(slot))
    process = subprocess.Popen([sys.executable, script], env=env) if rank == 0 else None
    try:
        yield
    except BaseException:
        if process is not None:
            process.kill()
            process.wait()
        raise
    if process is not None:
        assert process.wait(timeout=30) == 0


def test_world_grows_by_a_newcomer(rank, size):
    with newcomer_on_rank_0(rank, 1000):
        comm.grow(comm.WORLD_COMM_GROUP, 1, "grown")
        try:
            assert comm.get_rank("grown") == rank  # old ranks keep theirs
            assert comm.get_group_size("grown") == size + 1
            assert check_grown("grown", size) == []
        finally:
            comm.destroy_group("grown")
    out, _ = comm.all_reduce(np.array([rank], np.int64))  # the world goes on
    assert_same(out, np.array([size * (size - 1) // 2], np.int64))


def test_world_grows_without_blocking(rank, size):
    growing = comm.grow_async(comm.WORLD_COMM_GROUP, 1, "grown-async")
    with pytest.raises(comm.CommInvalidUsageError, match="still being made"):
        comm.get_rank("grown-async")
    out, _ = comm.all_reduce(np.array([rank], np.int64))  # the world works while it grows
    assert_same(out, np.array([size * (size - 1) // 2], np.int64))
    with newcomer_on_rank_0(rank, 1001):  # it comes after the grow began
        growing.wait()
        assert growing.is_completed()
        try:
            assert comm.get_rank("grown-async") == rank
            assert check_grown("grown-async", size) == []
        finally:
            comm.destroy_group("grown-async")


def test_grow_checks(rank, size):
    with pytest.raises(comm.CommInvalidArgumentError, match="count 0 is outside 1..65535"):
        comm.grow(comm.WORLD_COMM_GROUP, 0, "bad")
    with pytest.raises(ValueError, match="count 65536"):  # CommInvalidArgumentError is a ValueError
        comm.grow_async(comm.WORLD_COMM_GROUP, 65536, "bad")
    with pytest.raises(TypeError, match="count must be int"):
        comm.grow(comm.WORLD_COMM_GROUP, "1", "bad")
    with pytest.raises(TypeError):
        comm.grow(comm.WORLD_COMM_GROUP, 1, 5)
    with pytest.raises(ValueError, match="exists already"):
        comm.grow_async(comm.WORLD_COMM_GROUP, 1, comm.WORLD_COMM_GROUP)
    with pytest.raises(ValueError, match="does not exist"):
        comm.grow("no-such-group", 1, "bad")
    # Every rank learns that the counts differ, without a newcomer in sight.
    with pytest.raises(comm.CommInvalidArgumentError, match="different counts"):
        comm.grow(comm.WORLD_COMM_GROUP, 2 if rank == 0 else 1, "bad")
    with pytest.raises(ValueError, match="does not exist"):
        comm.get_rank("bad")
    comm.barrier()
