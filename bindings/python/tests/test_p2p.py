"""send/recv/isend/irecv and batch_isend_irecv; peers are world ranks."""

import numpy as np

import libcomm as comm
from reference import BFLOAT16, assert_same, to_bfloat16, values


def ring(rank, size):
    return (rank + 1) % size, (rank - 1) % size


def test_send_recv_pairs(rank, size):
    # Ranks of the first half send to the second half, as in comm_func's example.
    half = size // 2
    x = np.ones((2, 2), np.float32) * 0.01 * (rank + 1)
    if rank < half:
        assert comm.send(x, rank + half) is None
    else:
        out = comm.recv(np.ones((2, 2), np.float32), rank - half)
        assert_same(out, np.ones((2, 2), np.float32) * 0.01 * (rank - half + 1))


def test_isend_irecv_ring_with_tags(rank, size):
    nxt, prev = ring(rank, size)
    handles = [comm.isend(np.full(3, rank * 100 + tag, np.int32), nxt, tag=tag) for tag in (5, 9)]
    late, h9 = comm.irecv(np.empty(3, np.int32), prev, tag=9)
    early, h5 = comm.irecv(np.empty(3, np.int32), src=prev, tag=5)
    for h in (h9, h5, *handles):
        h.wait()
    assert_same(early, np.full(3, prev * 100 + 5, np.int32))
    assert_same(late, np.full(3, prev * 100 + 9, np.int32))


def test_recv_template_is_untouched(rank, size):
    nxt, prev = ring(rank, size)
    template = np.full(4, -1.0)
    handle = comm.isend(np.arange(4.0) + rank, nxt)
    out = comm.recv(template, prev)
    handle.wait()
    assert_same(out, np.arange(4.0) + prev)
    assert_same(template, np.full(4, -1.0))


def test_batch_isend_irecv_ring(rank, size):
    # comm_func's example: send this_rank + 1 to the next rank.
    nxt, prev = ring(rank, size)
    ops = [comm.P2POp("isend", np.array(rank + 1, np.float32), nxt),
           comm.P2POp(comm.irecv, np.array(0, np.float32), prev)]
    sent, received = comm.batch_isend_irecv(ops)
    assert_same(sent, np.array(0, np.float32))
    assert_same(received, np.array(prev + 1, np.float32))


def test_batch_recv_by_shape_and_dtype(rank, size):
    nxt, prev = ring(rank, size)
    ops = [comm.P2POp(comm.isend, values(rank, (2, 3), np.int16), nxt),
           comm.P2POp("irecv", (2, 3), prev, recv_dtype=np.int16)]
    _, received = comm.batch_isend_irecv(ops)
    assert_same(received, values(prev, (2, 3), np.int16))


def test_batch_bfloat16_shape(rank, size):
    nxt, prev = ring(rank, size)
    ops = [comm.P2POp("irecv", [4], prev, recv_dtype=BFLOAT16),
           comm.P2POp("isend", to_bfloat16([rank, 1, 2, 3]), nxt)]
    received, _ = comm.batch_isend_irecv(ops)
    assert_same(received, to_bfloat16([prev, 1, 2, 3]))


def test_batch_same_peer_matches_in_order_and_by_tag(rank, size):
    nxt, prev = ring(rank, size)
    ops = []
    for i in range(3):
        ops.append(comm.P2POp("isend", np.full(2, 10 * rank + i, np.int64), nxt))
    ops.append(comm.P2POp("isend", np.full(2, -rank, np.int64), nxt, tag=7))
    recvs = [comm.P2POp("irecv", np.empty(2, np.int64), prev, tag=7)]
    recvs += [comm.P2POp("irecv", np.empty(2, np.int64), prev) for _ in range(3)]
    results = comm.batch_isend_irecv(recvs + ops)
    assert len(results) == 8
    assert_same(results[0], np.full(2, -prev, np.int64))
    for i in range(3):
        assert_same(results[1 + i], np.full(2, 10 * prev + i, np.int64))


def test_batch_in_a_group(rank, size):
    members = list(range(size))[::-1]  # group rank i is world rank size-1-i
    comm.create_group("reversed", members)
    try:
        nxt, prev = ring(rank, size)  # world ranks
        ops = [comm.P2POp("isend", np.array([rank]), nxt, group="reversed"),
               comm.P2POp("irecv", np.array([0]), prev, group="reversed")]
        _, received = comm.batch_isend_irecv(ops)
        assert_same(received, np.array([prev]))
        out = comm.recv(np.array([0]), prev, "reversed") if rank % 2 else None
        if rank % 2 == 0:
            comm.send(np.array([rank * 7]), nxt, "reversed")
        if out is not None:
            assert_same(out, np.array([prev * 7]))
    finally:
        comm.barrier()
        comm.destroy_group("reversed")
