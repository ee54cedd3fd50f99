"""comm_func's exception types for the same mistakes, and CommError
subclasses carrying the C library's message for failures of the C layer."""

import numpy as np
import pytest

import libcomm as comm
from libcomm import _comm_swig as C

X = np.ones(4, np.float32)


def test_type_errors_as_comm_func():
    with pytest.raises(TypeError):
        comm.send(X, dst="1")  # a non-int peer
    with pytest.raises(TypeError):
        comm.recv(X, src=1.0)
    with pytest.raises(TypeError):
        comm.all_reduce(X, group=5)  # a non-str group
    with pytest.raises(TypeError):
        comm.barrier(group=["world"])
    with pytest.raises(TypeError):
        comm.all_reduce(X, op=0)  # an op that is not a ReduceOp
    with pytest.raises(TypeError):
        comm.all_reduce(X, op="mean")
    with pytest.raises(TypeError):
        comm.all_reduce([1.0, 2.0])  # not an array
    with pytest.raises(TypeError):
        comm.all_reduce(np.ones(2, np.complex64))  # no comm dtype
    with pytest.raises(TypeError):
        comm.batch_isend_irecv((comm.P2POp("isend", X, 0),))  # a tuple, not a list
    with pytest.raises(TypeError):
        comm.batch_isend_irecv([])
    with pytest.raises(TypeError):
        comm.batch_isend_irecv(["isend"])
    with pytest.raises(TypeError):
        comm.all_to_all_with_output_shape([(4,), (4,)], [X, np.ones(4, np.int32)])  # mixed dtypes
    with pytest.raises(TypeError):
        comm.all_to_all_with_output_shape([(4,)], X)


def test_p2pop_checks_when_constructed():
    with pytest.raises(TypeError):
        comm.P2POp("isend", X, "1")
    with pytest.raises(TypeError):
        comm.P2POp("send", X, 1)
    with pytest.raises(TypeError):
        comm.P2POp(print, X, 1)
    with pytest.raises(TypeError):
        comm.P2POp("irecv", (2,), 1, recv_dtype="no-such-dtype")
    with pytest.raises(ValueError):
        comm.P2POp("irecv", (2,), 1)  # a shape needs recv_dtype
    with pytest.raises(TypeError):
        comm.P2POp("isend", (2,), 1, recv_dtype=np.float32)
    assert comm.P2POp(comm.isend, X, 1, tag=3).tag == 3


def test_value_errors(rank, size):
    with pytest.raises(ValueError, match="divide"):
        comm.reduce_scatter_tensor(np.ones((size + 1, 2)))  # dim 0 does not divide
    with pytest.raises(ValueError, match="divide"):
        comm.scatter_tensor(np.ones(size + 1))
    with pytest.raises(ValueError, match="divided|divide"):
        comm.all_to_all_single_with_output_shape((size,), np.ones(size + 1))
    with pytest.raises(ValueError, match="no-such-group"):
        comm.all_reduce(X, group="no-such-group")
    with pytest.raises(ValueError):
        comm.send(X, dst=size)  # not a world rank
    with pytest.raises(ValueError):
        comm.send(X, tag=-1)
    with pytest.raises(ValueError):
        comm.all_to_all_single_with_output_shape((size,), np.ones(size), input_split_sizes=[1] * (size + 1))


def test_avg_of_bool_is_invalid():
    with pytest.raises(comm.CommInvalidArgumentError, match="avg.*bool"):
        comm.all_reduce(np.array([True, False]), op=comm.ReduceOp.AVG)


def test_c_layer_invalid_argument_carries_the_message():
    with pytest.raises(comm.CommInvalidArgumentError) as caught:
        comm.all_reduce(X, op=comm.ReduceOp.BAND)  # bitwise op on floats
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, comm.CommError)
    assert "comm_all_reduce" in str(caught.value) and "band" in str(caught.value)
    assert caught.value.status == C.COMM_ERR_INVALID_ARGUMENT


def test_c_layer_invalid_usage(rank, size):
    # Through the raw SWIG layer: only members may create a group.
    world = comm.management.group_of(None, "test").comm
    others = [r for r in range(size) if r != rank]
    with pytest.raises(comm.CommInvalidUsageError, match="comm_group_create"):
        C.comm_group_create(world, others, "without-me")


def test_every_status_has_its_class():
    expected = {
        C.COMM_ERR_INVALID_ARGUMENT: comm.CommInvalidArgumentError,
        C.COMM_ERR_INVALID_USAGE: comm.CommInvalidUsageError,
        C.COMM_ERR_NOT_SUPPORTED: comm.CommNotSupportedError,
        C.COMM_ERR_NO_MEMORY: comm.CommNoMemoryError,
        C.COMM_ERR_TIMEOUT: comm.CommTimeoutError,
        C.COMM_ERR_REMOTE: comm.CommRemoteError,
        C.COMM_ERR_MISMATCH: comm.CommMismatchError,
        C.COMM_ERR_ABORTED: comm.CommAbortedError,
        C.COMM_ERR_TRANSPORT: comm.CommTransportError,
        C.COMM_ERR_BOOTSTRAP: comm.CommBootstrapError,
        C.COMM_ERR_INTERNAL: comm.CommInternalError,
        C.COMM_ERR_REVOKED: comm.CommRevokedError,
    }
    assert comm.errors.ERROR_CLASSES == expected
    for cls in expected.values():
        assert issubclass(cls, comm.CommError) and issubclass(cls, RuntimeError)
    assert issubclass(comm.CommTimeoutError, TimeoutError)


def test_timeout_then_completion(rank, size):
    nxt, prev = (rank + 1) % size, (rank - 1) % size
    out, handle = comm.irecv(np.zeros(2, np.int32), prev, tag=42)
    with pytest.raises(comm.CommTimeoutError):
        handle.wait(timeout=0.05)  # nobody has sent yet
    assert not handle.is_completed()
    comm.barrier()
    comm.send(np.full(2, rank, np.int32), nxt, tag=42)
    handle.wait()  # the same receive goes on and completes
    np.testing.assert_array_equal(out, np.full(2, prev, np.int32))


def test_mismatch(rank, size):
    name = "mismatch"
    comm.create_group(name, list(range(size)))
    try:
        with pytest.raises(comm.CommMismatchError) as caught:
            comm.all_reduce(np.ones(rank + 1, np.float32), group=name)  # counts differ on every rank
        assert "all_reduce" in str(caught.value)
    finally:
        comm.destroy_group(name)
    comm.barrier()


def test_aborted_group(rank, size):
    name = "aborted"
    comm.create_group(name, list(range(size)))
    try:
        comm.abort(name)
        with pytest.raises(comm.CommAbortedError):
            comm.barrier(name)
    finally:
        comm.destroy_group(name)
    out, _ = comm.all_reduce(np.ones(1))  # the world is unaffected
    np.testing.assert_array_equal(out, [size])


def test_revoked_group(rank, size):
    name = "revoked"
    comm.create_group(name, list(range(size)))
    try:
        if rank == size - 1:
            comm.revoke(name)
            with pytest.raises(comm.CommRevokedError, match="revoked on this rank"):
                comm.barrier(name)
        else:
            with pytest.raises(comm.CommRevokedError, match=f"revoked by rank {size - 1}"):
                comm.barrier(name)
        with pytest.raises(comm.CommRevokedError):  # and every later call
            comm.all_reduce(np.ones(1), group=name)
    finally:
        comm.destroy_group(name)
    out, _ = comm.all_reduce(np.ones(1))  # the world is unaffected
    np.testing.assert_array_equal(out, [size])


def test_dtype_argument_checks():
    with pytest.raises(TypeError):
        comm.all_reduce(np.ones(2, np.float32), dtype=comm.bfloat16)  # 4-byte values are not bfloat16 bits
    with pytest.raises(TypeError):
        comm.all_reduce(np.ones(2, np.float32), dtype="no-such-dtype")
