"""Every rank runs the same tests in the same order (under commrun), so the
collectives of each test meet their peers'. A test that checks an error
raised before any communication may run on some ranks only."""

import pytest

import libcomm as comm


@pytest.fixture(scope="session", autouse=True)
def world():
    # The session's world is joined without blocking (test_world calls
    # init(), the examples join with it): unusable until the handle is waited.
    joined = comm.init_async()
    assert comm.init_async() is joined
    with pytest.raises(comm.CommInvalidUsageError, match="still being made"):
        comm.get_rank()
    joined.wait()
    assert joined.is_completed() and comm.init_async().is_completed()
    yield
    comm.barrier()
    comm.release()


@pytest.fixture
def rank():
    return comm.get_rank()


@pytest.fixture
def size():
    return comm.get_group_size()
