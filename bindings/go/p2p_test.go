package comm_test

import (
	"context"
	"testing"
	"time"

	"libcomm.org/comm"
)

func neighbours() (left, right int) {
	return (rank + size - 1) % size, (rank + 1) % size
}

func TestSendRecvRing(t *testing.T) {
	left, right := neighbours()
	mine, got := []float64{float64(rank), float64(rank) + 0.5}, make([]float64, 2)
	// Even ranks send first, odd ones receive first: nobody waits on a rank that waits on it.
	if rank%2 == 0 {
		must(t, comm.Send(world, mine, right, 3))
		must(t, comm.Recv(world, got, left, 3))
	} else {
		must(t, comm.Recv(world, got, left, 3))
		must(t, comm.Send(world, mine, right, 3))
	}
	if got[0] != float64(left) || got[1] != float64(left)+0.5 {
		t.Fatalf("got %v from rank %d", got, left)
	}
}

func TestAsyncReceivesMatchByTag(t *testing.T) {
	left, right := neighbours()
	first, second := make([]int32, 4), make([]int32, 4)
	r2, err := comm.RecvAsync(world, second, left, 2)
	must(t, err)
	r1, err := comm.RecvAsync(world, first, left, 1)
	must(t, err)
	s1, err := comm.SendAsync(world, []int32{int32(rank), 1, 1, 1}, right, 1)
	must(t, err)
	s2, err := comm.SendAsync(world, []int32{int32(rank), 2, 2, 2}, right, 2)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range []*comm.Handle{r1, r2, s1, s2} {
		must(t, h.Wait(ctx))
	}
	if first[0] != int32(left) || first[1] != 1 || second[0] != int32(left) || second[3] != 2 {
		t.Fatalf("tag 1 got %v, tag 2 got %v", first, second)
	}
}

func TestSameTagMessagesArriveInOrder(t *testing.T) {
	left, right := neighbours()
	const messages = 8
	got := make([][]int64, messages)
	receives := make([]*comm.Handle, messages)
	for m := range got {
		got[m] = make([]int64, 1)
		var err error
		receives[m], err = comm.RecvAsync(world, got[m], left, 5)
		must(t, err)
	}
	for m := 0; m < messages; m++ {
		h, err := comm.SendAsync(world, []int64{int64(rank*100 + m)}, right, 5)
		must(t, err)
		must(t, h.Wait(context.Background()))
	}
	for m, h := range receives {
		must(t, h.Wait(context.Background()))
		if got[m][0] != int64(left*100+m) {
			t.Fatalf("message %d is %d", m, got[m][0])
		}
	}
}

func TestTestTurnsTrue(t *testing.T) {
	left, right := neighbours()
	got := make([]uint8, 3)
	h, err := comm.RecvAsync(world, got, left, 6)
	must(t, err)
	must(t, world.Barrier())
	must(t, comm.Send(world, []uint8{1, 2, uint8(rank)}, right, 6))
	deadline := time.Now().Add(300 * time.Second)
	for {
		done, err := h.Test()
		must(t, err)
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the receive did not complete in 300 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got[0] != 1 || got[2] != uint8(left) {
		t.Fatalf("got %v", got)
	}
}

func TestBatchWithEveryPeer(t *testing.T) {
	received := make([][]int32, size)
	var ops []comm.P2POp
	// Receives first and sends last: a batch completes whatever the order.
	for peer := size - 1; peer >= 0; peer-- {
		received[peer] = make([]int32, 2)
		ops = append(ops, comm.RecvOp(received[peer], peer, 7))
	}
	for peer := 0; peer < size; peer++ {
		ops = append(ops, comm.SendOp([]int32{int32(rank), int32(peer)}, peer, 7))
	}
	must(t, world.Batch(ops...))
	for peer, got := range received {
		if got[0] != int32(peer) || got[1] != int32(rank) {
			t.Fatalf("from %d got %v", peer, got)
		}
	}

	left, right := neighbours()
	fromLeft, fromRight := make([]float32, 2), make([]float32, 2)
	// With 2 ranks left == right: both messages come from one peer and match in order.
	h, err := world.BatchAsync(
		comm.SendOp([]float32{float32(rank), 1}, right, 0),
		comm.SendOp([]float32{float32(rank), -1}, left, 0),
		comm.RecvOp(fromLeft, left, 0),
		comm.RecvOp(fromRight, right, 0))
	must(t, err)
	must(t, h.Wait(context.Background()))
	if fromLeft[0] != float32(left) || fromLeft[1] != 1 || fromRight[0] != float32(right) || fromRight[1] != -1 {
		t.Fatalf("from left %v, from right %v", fromLeft, fromRight)
	}
}
