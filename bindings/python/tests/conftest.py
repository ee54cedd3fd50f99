"""Every rank runs the same tests in the same order (under commrun), so the
collectives of each test meet their peers'. A test that checks an error
raised before any communication may run on some ranks only."""

import pytest

import libcomm as comm


@pytest.fixture(scope="session", autouse=True)
def world():
    comm.init()
    yield
    comm.barrier()
    comm.release()


@pytest.fixture
def rank():
    return comm.get_rank()


@pytest.fixture
def size():
    return comm.get_group_size()
