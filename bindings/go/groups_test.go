package comm_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"libcomm.org/comm"
)

func TestWorld(t *testing.T) {
	if want, _ := strconv.Atoi(os.Getenv("COMM_RANK")); rank != want {
		t.Fatalf("rank %d, COMM_RANK %d", rank, want)
	}
	if want, _ := strconv.Atoi(os.Getenv("COMM_WORLD_SIZE")); size != want {
		t.Fatalf("size %d, COMM_WORLD_SIZE %d", size, want)
	}
	if world.LocalRank() != rank || world.LocalSize() != size || world.Name() != "world" {
		t.Fatalf("local %d of %d, name %q", world.LocalRank(), world.LocalSize(), world.Name())
	}
	if w, err := world.ToWorldRank(rank); err != nil || w != rank {
		t.Fatalf("ToWorldRank: %d, %v", w, err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(comm.Version()) {
		t.Fatalf("version %q", comm.Version())
	}
	if err := comm.CheckVersion(); err != nil {
		t.Fatalf("CheckVersion: %v", err)
	}
}

func TestFailedRanksAgreeAndShrinkWithNoFailure(t *testing.T) {
	if r, err := world.FailedRank(); err != nil || r != -1 {
		t.Fatalf("FailedRank = %d, %v", r, err)
	}
	if failed, err := world.FailedRanks(); err != nil || len(failed) != 0 {
		t.Fatalf("FailedRanks = %v, %v", failed, err)
	}
	want := uint32(0xFF)
	for r := 0; r < size; r++ {
		want &^= 1 << r
	}
	flags, failed, err := world.Agree(^(uint32(1) << rank) & 0xFF)
	if err != nil || flags != want || len(failed) != 0 {
		t.Fatalf("Agree = %#x, %v, %v; want %#x, []", flags, failed, err, want)
	}
	if flags, _, err := world.Agree(0xFFFFFFFF); err != nil || flags != 0xFFFFFFFF { // all 32 bits travel
		t.Fatalf("Agree(0xFFFFFFFF) = %#x, %v", flags, err)
	}
	shrunk, err := world.Shrink("shrunk")
	must(t, err)
	defer shrunk.Close()
	if shrunk.Size() != size || shrunk.Rank() != rank || shrunk.Name() != "shrunk" {
		t.Fatalf("rank %d of %d in %q", shrunk.Rank(), shrunk.Size(), shrunk.Name())
	}
	for r := 0; r < size; r++ {
		if w, err := shrunk.ToWorldRank(r); err != nil || w != r {
			t.Fatalf("ToWorldRank(%d) = %d, %v", r, w, err)
		}
	}
	sum := []int64{int64(rank + 1)}
	must(t, comm.AllReduce(shrunk, sum, sum, comm.Sum))
	if want := int64(size * (size + 1) / 2); sum[0] != want {
		t.Fatalf("sum %d, want %d", sum[0], want)
	}
	if failed, err := shrunk.FailedRanks(); err != nil || len(failed) != 0 {
		t.Fatalf("FailedRanks of the shrunk = %v, %v", failed, err)
	}
	if flags, failed, err := shrunk.Agree(^(uint32(1) << rank) & 0xFF); err != nil || flags != want || len(failed) != 0 {
		t.Fatalf("Agree on the shrunk = %#x, %v, %v", flags, failed, err)
	}
	must(t, shrunk.Close())
	must(t, world.Barrier())
}

func TestSplitByParity(t *testing.T) {
	half, err := world.Split(rank%2, -rank, "parity") // key -rank: backwards
	must(t, err)
	defer half.Close()
	members := (size - rank%2 + 1) / 2
	if half.Size() != members || half.Rank() != members-1-rank/2 || half.Name() != "parity" {
		t.Fatalf("rank %d of %d in %q", half.Rank(), half.Size(), half.Name())
	}
	other := 1 - rank%2
	if r, err := half.FromWorldRank(other); err != nil || r != -1 {
		t.Fatalf("FromWorldRank(%d) = %d, %v", other, r, err)
	}
	if w, err := half.ToWorldRank(half.Rank()); err != nil || w != rank {
		t.Fatalf("ToWorldRank = %d, %v", w, err)
	}
	sum := []int64{int64(rank)}
	must(t, comm.AllReduce(half, sum, sum, comm.Sum))
	want := int64(0)
	for r := rank % 2; r < size; r += 2 {
		want += int64(r)
	}
	if sum[0] != want {
		t.Fatalf("sum %d, want %d", sum[0], want)
	}
	must(t, half.Close())
	must(t, world.Barrier())
}

func TestSplitUndefinedJoinsNothing(t *testing.T) {
	color := 0
	if rank == 0 {
		color = comm.Undefined
	}
	rest, err := world.Split(color, 0, "")
	must(t, err)
	if (rest == nil) != (rank == 0) {
		t.Fatalf("rank %d got %v", rank, rest)
	}
	if rest != nil {
		if rest.Size() != size-1 || rest.Rank() != rank-1 {
			t.Fatalf("rank %d of %d", rest.Rank(), rest.Size())
		}
		ranks := []int32{int32(rest.Rank())}
		must(t, comm.Broadcast(rest, ranks, rest.Size()-1))
		if ranks[0] != int32(size-2) {
			t.Fatalf("broadcast gave %d", ranks[0])
		}
		must(t, rest.Close())
	}
	must(t, world.Barrier())
}

func TestGroupWithoutWorldRankZero(t *testing.T) {
	members := make([]int, 0, size-1)
	for r := size - 1; r >= 1; r-- {
		members = append(members, r) // reversed: group rank i is world rank size-1-i
	}
	if rank != 0 {
		group, err := world.Group(members, "no-zero")
		must(t, err)
		if group.Size() != size-1 || group.Rank() != size-1-rank || group.Name() != "no-zero" {
			t.Fatalf("rank %d of %d in %q", group.Rank(), group.Size(), group.Name())
		}
		if r, err := group.FromWorldRank(0); err != nil || r != -1 {
			t.Fatalf("FromWorldRank(0) = %d, %v", r, err)
		}
		value := []float64{float64(rank)}
		must(t, comm.AllReduce(group, value, value, comm.Max))
		if value[0] != float64(size-1) {
			t.Fatalf("max %v", value[0])
		}
		must(t, group.Close())
	}
	must(t, world.Barrier())
}

func TestClosingAParentClosesItsGroupsAndHandles(t *testing.T) {
	parent, err := world.Split(0, rank, "")
	must(t, err)
	child, err := parent.Split(0, rank, "")
	must(t, err)
	pending, err := child.BarrierAsync()
	must(t, err)
	must(t, parent.Close())
	if err := child.Barrier(); !isUsage(err) {
		t.Fatalf("barrier on a child of a closed parent: %v", err)
	}
	if err := pending.Wait(nil); !isUsage(err) { // nil Context: no panic either
		t.Fatalf("wait on a handle of a closed communicator: %v", err)
	}
	must(t, child.Close())
	must(t, parent.Close())
	must(t, world.Barrier())
}

func TestTimeouts(t *testing.T) {
	group, err := world.Split(0, rank, "")
	must(t, err)
	defer group.Close()
	must(t, group.SetTimeout(12345*time.Millisecond))
	if d, err := group.Timeout(); err != nil || d != 12345*time.Millisecond {
		t.Fatalf("Timeout: %v, %v", d, err)
	}
}

// sumOfWorldRanks is the all_reduce over c of its members' world ranks.
func sumOfWorldRanks(t *testing.T, c *comm.Communicator) int64 {
	t.Helper()
	sum := []int64{int64(rank)}
	must(t, comm.AllReduce(c, sum, sum, comm.Sum))
	return sum[0]
}

func TestSplitGroupAndShrinkMadeWithoutBlocking(t *testing.T) {
	ctx := context.Background()
	splitting, err := world.SplitAsync(rank%2, rank, "half-async")
	must(t, err)
	for i := 0; i < 3; i++ { // collectives on the parent go on meanwhile
		if got, want := sumOfWorldRanks(t, world), int64(size*(size-1)/2); got != want {
			t.Fatalf("world sum %d, want %d", got, want)
		}
	}
	half, err := splitting.Wait(ctx)
	must(t, err)
	if done, err := splitting.Test(); !done || err != nil {
		t.Fatalf("Test after Wait = %v, %v", done, err)
	}
	want := int64(0)
	for r := rank % 2; r < size; r += 2 {
		want += int64(r)
	}
	if got := sumOfWorldRanks(t, half); got != want || half.Name() != "half-async" || half.Rank() != rank/2 {
		t.Fatalf("half: sum %d (want %d), %v", got, want, half)
	}

	reversed := make([]int, size)
	for i := range reversed {
		reversed[i] = size - 1 - i
	}
	grouping, err := world.GroupAsync(reversed, "")
	must(t, err)
	var group *comm.Communicator
	for group == nil {
		done, err := grouping.Test()
		must(t, err)
		if done {
			group, err = grouping.Wait(ctx)
			must(t, err)
		}
	}
	if got, want := sumOfWorldRanks(t, group), int64(size*(size-1)/2); got != want || group.Rank() != size-1-rank {
		t.Fatalf("reversed group: sum %d (want %d), rank %d", got, want, group.Rank())
	}

	shrinking, err := half.ShrinkAsync("half-shrunk")
	must(t, err)
	shrunk, err := shrinking.Wait(ctx)
	must(t, err)
	must(t, half.Close()) // the shrunk communicator is the world's
	if got := sumOfWorldRanks(t, shrunk); got != want || shrunk.Name() != "half-shrunk" {
		t.Fatalf("shrunk: sum %d (want %d), %v", got, want, shrunk)
	}
	must(t, shrinking.Close()) // closing a completed making leaves its communicator
	if got := sumOfWorldRanks(t, shrunk); got != want {
		t.Fatalf("shrunk after closing its making: sum %d, want %d", got, want)
	}
	must(t, shrunk.Close())
	must(t, group.Close())

	undefined, err := world.SplitAsync(map[bool]int{true: 0, false: comm.Undefined}[rank == 0], 0, "")
	must(t, err)
	alone, err := undefined.Wait(ctx)
	must(t, err)
	if (rank == 0) != (alone != nil) {
		t.Fatalf("split with Undefined on rank %d gave %v", rank, alone)
	}
	must(t, alone.Close())
	must(t, world.Barrier())
}

func TestWorldGrowsByANewcomer(t *testing.T) {
	newcomer := startNewcomer(t, 1000, "environment")
	grown, err := world.Grow(1, "grown")
	must(t, err)
	if grown.Size() != size+1 || grown.Rank() != rank || grown.Name() != "grown" { // old ranks keep theirs
		t.Fatalf("rank %d of %d in %q", grown.Rank(), grown.Size(), grown.Name())
	}
	if failed := checkGrown(grown, size); len(failed) > 0 {
		t.Fatal(failed)
	}
	must(t, grown.Close())
	newcomer.succeeded(t)
	if got, want := sumOfWorldRanks(t, world), int64(size*(size-1)/2); got != want { // the world goes on
		t.Fatalf("world sum %d, want %d", got, want)
	}
}

func TestWorldGrowsWithoutBlocking(t *testing.T) {
	growing, err := world.GrowAsync(1, "")
	must(t, err)
	if got, want := sumOfWorldRanks(t, world), int64(size*(size-1)/2); got != want { // the world works meanwhile
		t.Fatalf("world sum %d, want %d", got, want)
	}
	newcomer := startNewcomer(t, 1001, "setting") // after the grow began
	grown, err := growing.Wait(context.Background())
	must(t, err)
	must(t, growing.Close()) // closing a completed making leaves its communicator
	if grown.Rank() != rank || grown.Name() != "world-grown" {
		t.Fatalf("rank %d in %q", grown.Rank(), grown.Name())
	}
	if failed := checkGrown(grown, size); len(failed) > 0 {
		t.Fatal(failed)
	}
	must(t, grown.Close())
	newcomer.succeeded(t)
}
