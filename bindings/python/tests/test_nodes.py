"""Nodes: how many, which one, and a group per node. Under
COMM_TEST_RANKS_PER_NODE=L (python.nodes.n4) ranks 0..L-1 count as node 0,
the next L as node 1, and so on; otherwise every rank is on this host."""

import os

import numpy as np
import pytest

import libcomm as comm


def _ranks_per_node(size):
    return int(os.environ.get("COMM_TEST_RANKS_PER_NODE", "0")) or size


def test_node_count_and_id(rank, size):
    per_node = _ranks_per_node(size)
    assert comm.get_node_count() == (size + per_node - 1) // per_node
    assert comm.get_node_id() == rank // per_node


def test_node_group_holds_this_node(rank, size):
    per_node = _ranks_per_node(size)
    comm.create_node_group("my_node")
    try:
        first = rank // per_node * per_node
        members = list(range(first, min(first + per_node, size)))
        assert comm.get_group_size("my_node") == len(members)
        assert comm.get_rank("my_node") == members.index(rank)
        assert [comm.get_world_rank_from_group_rank("my_node", r) for r in range(len(members))] == members
        assert comm.get_node_count("my_node") == 1 and comm.get_node_id("my_node") == 0
        total, _ = comm.all_reduce(np.array([rank], dtype=np.int64), group="my_node")
        assert int(total[0]) == sum(members)
    finally:
        comm.destroy_group("my_node")


def test_node_group_checks(rank, size):
    with pytest.raises(ValueError, match="exists already"):
        comm.create_node_group("world")
    with pytest.raises(ValueError, match="no_such_group"):
        comm.get_node_count("no_such_group")
