package comm_test

import (
	"os"
	"strconv"
	"testing"

	"libcomm.org/comm"
)

// ranksPerNode is COMM_TEST_RANKS_PER_NODE where set (go.nodes.n4: ranks
// 0..L-1 count as node 0, the next L as node 1...), else every rank is on
// this host.
func ranksPerNode() int {
	if faked, _ := strconv.Atoi(os.Getenv("COMM_TEST_RANKS_PER_NODE")); faked > 0 {
		return faked
	}
	return size
}

func TestNodeCountAndID(t *testing.T) {
	perNode := ranksPerNode()
	if n, err := world.NodeCount(); err != nil || n != (size+perNode-1)/perNode {
		t.Fatalf("NodeCount: %d, %v; want %d", n, err, (size+perNode-1)/perNode)
	}
	if id, err := world.NodeID(); err != nil || id != rank/perNode {
		t.Fatalf("NodeID: %d, %v; want %d", id, err, rank/perNode)
	}
}

func TestSplitByNodeHoldsThisNode(t *testing.T) {
	perNode := ranksPerNode()
	first := rank / perNode * perNode
	members := perNode
	if first+members > size {
		members = size - first
	}
	node, err := world.SplitByNode("node")
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if node.Size() != members || node.Rank() != rank-first {
		t.Fatalf("rank %d of %d; want %d of %d", node.Rank(), node.Size(), rank-first, members)
	}
	if w, err := node.ToWorldRank(0); err != nil || w != first {
		t.Fatalf("ToWorldRank(0): %d, %v; want %d", w, err, first)
	}
	if n, err := node.NodeCount(); err != nil || n != 1 {
		t.Fatalf("NodeCount of the node's communicator: %d, %v", n, err)
	}
	sum := []int64{int64(rank)}
	if err := comm.AllReduce(node, sum, sum, comm.Sum); err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	for r := first; r < first+members; r++ {
		want += int64(r)
	}
	if sum[0] != want {
		t.Fatalf("sum %d, want %d", sum[0], want)
	}
}
