package comm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"libcomm.org/comm"
)

func isUsage(err error) bool { return errors.Is(err, comm.ErrInvalidUsage) }

func expectStatus(t *testing.T, what string, err error, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got %v, want %v", what, err, sentinel)
	}
	var e *comm.Error
	if !errors.As(err, &e) || e.Message == "" {
		t.Fatalf("%s: %v is not a *comm.Error with a message", what, err)
	}
}

func TestArgumentsGoCanCheck(t *testing.T) {
	four, five := make([]float32, 4), make([]float32, 5)
	cases := map[string]error{
		"lengths":        comm.AllReduce(world, four, five, comm.Sum),
		"root":           comm.Broadcast(world, four, size),
		"negative root":  comm.Reduce(world, four, four, comm.Sum, -1),
		"peer":           comm.Send(world, four, size, 0),
		"tag":            comm.Recv(world, four, 0, -1),
		"allgather":      comm.AllGather(world, four, four),
		"counts":         comm.AllGatherV(world, four, four, make([]int, size+1)),
		"negative count": comm.ScatterV(world, four, four, append(make([]int, size-1), -1), 0),
		"lists":          comm.AllToAll(world, make([][]float32, size+1), make([][]float32, size)),
		"splits":         comm.AllToAllSingle(world, four, four, []int{1}, nil),
		"scatter":        comm.ReduceScatter(world, make([]float32, 4*size+1), four, comm.Sum),
		"group":          func() error { _, err := world.Group([]int{0, size}, ""); return err }(),
		"color":          func() error { _, err := world.Split(-2, 0, ""); return err }(),
		"timeout":        world.SetTimeout(0),
		"batch peer":     world.Batch(comm.RecvOp(four, size, 0)),
		"batch op":       world.Batch(comm.P2POp{}),
		"nul":            func() error { _, err := world.Split(0, 0, "a\x00b"); return err }(),
	}
	for what, err := range cases {
		expectStatus(t, what, err, comm.ErrInvalidArgument)
	}
}

func TestNilObjectsGiveErrors(t *testing.T) {
	var c *comm.Communicator
	var h *comm.Handle
	expectStatus(t, "nil communicator", comm.AllReduce(c, []int8{1}, []int8{1}, comm.Sum), comm.ErrInvalidUsage)
	expectStatus(t, "nil barrier", c.Barrier(), comm.ErrInvalidUsage)
	expectStatus(t, "nil abort", c.Abort(), comm.ErrInvalidUsage)
	expectStatus(t, "nil wait", h.Wait(context.Background()), comm.ErrInvalidUsage)
	if _, err := h.Test(); !isUsage(err) {
		t.Fatalf("nil Test: %v", err)
	}
	if c.Close() != nil || h.Close() != nil || c.Rank() != -1 || c.Size() != 0 {
		t.Fatal("nil Close or queries misbehave")
	}
	if _, err := c.Split(0, 0, ""); !isUsage(err) {
		t.Fatalf("nil Split: %v", err)
	}
	if _, err := c.Shrink(""); !isUsage(err) {
		t.Fatalf("nil Shrink: %v", err)
	}
	if _, err := c.Grow(1, ""); !isUsage(err) {
		t.Fatalf("nil Grow: %v", err)
	}
	if _, err := c.SplitAsync(0, 0, ""); !isUsage(err) {
		t.Fatalf("nil SplitAsync: %v", err)
	}
	var m *comm.Making
	if _, err := m.Wait(context.Background()); !isUsage(err) {
		t.Fatalf("nil Making.Wait: %v", err)
	}
	if _, err := m.Test(); !isUsage(err) {
		t.Fatalf("nil Making.Test: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("nil Making.Close: %v", err)
	}
	if _, _, err := c.Agree(1); !isUsage(err) {
		t.Fatalf("nil Agree: %v", err)
	}
}

func TestFailuresTheCLibraryReports(t *testing.T) {
	floats := make([]float32, 4)
	err := comm.AllReduce(world, floats, floats, comm.BXor)
	if !errors.Is(err, comm.ErrNotSupported) && !errors.Is(err, comm.ErrInvalidArgument) {
		t.Fatalf("bxor on float32: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "comm_all_reduce") {
		t.Fatalf("message %q does not name the call", err)
	}
	splits := make([]int, size)
	splits[0] = size + 1 // does not add up to the length: only C sees the sums
	err = comm.AllToAllSingle(world, make([]int8, size), make([]int8, size), splits, splits)
	expectStatus(t, "splits", err, comm.ErrInvalidArgument)
	must(t, world.Barrier())
}

func TestGrowRefusesBadCounts(t *testing.T) {
	for what, count := range map[string]int{"count 0": 0, "count 65536": 65536, "a count no C int holds": 1<<32 + 1} {
		_, err := world.Grow(count, "")
		expectStatus(t, what, err, comm.ErrInvalidArgument)
		_, err = world.GrowAsync(count, "")
		expectStatus(t, what+" (async)", err, comm.ErrInvalidArgument)
	}
	if _, err := world.Grow(0, ""); !strings.HasPrefix(err.Error(), "comm_grow") {
		t.Fatalf("message %q does not name the call", err)
	}
	// Every rank learns that the counts differ, without a newcomer in sight.
	_, err := world.Grow(map[bool]int{true: 2, false: 1}[rank == 0], "")
	expectStatus(t, "different counts", err, comm.ErrInvalidArgument)
	if !strings.Contains(err.Error(), "different counts") {
		t.Fatalf("%q does not say the counts differ", err)
	}
	must(t, world.Barrier())
}

func TestClosedObjectsGiveErrors(t *testing.T) {
	group, err := world.Split(0, rank, "")
	must(t, err)
	done, err := group.BarrierAsync()
	must(t, err)
	must(t, done.Wait(context.Background()))
	unwaited, err := group.BarrierAsync()
	must(t, err)
	must(t, group.Close())
	data := []int32{1}
	for what, err := range map[string]error{
		"barrier":     group.Barrier(),
		"all_reduce":  comm.AllReduce(group, data, data, comm.Sum),
		"send":        comm.Send(group, data, 0, 0),
		"abort":       group.Abort(),
		"timeout":     func() error { _, err := group.Timeout(); return err }(),
		"split":       func() error { _, err := group.Split(0, 0, ""); return err }(),
		"failed":      func() error { _, err := group.FailedRanks(); return err }(),
		"agree":       func() error { _, _, err := group.Agree(1); return err }(),
		"shrink":      func() error { _, err := group.Shrink(""); return err }(),
		"shrinkAsync": func() error { _, err := group.ShrinkAsync(""); return err }(),
		"grow":        func() error { _, err := group.Grow(1, ""); return err }(),
		"growAsync":   func() error { _, err := group.GrowAsync(1, ""); return err }(),
		"async":       func() error { _, err := comm.AllReduceAsync(group, data, data, comm.Sum); return err }(),
		"handle":      unwaited.Wait(context.Background()), // closing the communicator closed it
	} {
		expectStatus(t, what, err, comm.ErrInvalidUsage)
		if !strings.Contains(err.Error(), "closed") {
			t.Fatalf("%s: %q does not say closed", what, err)
		}
	}
	if ok, err := done.Test(); !ok || err != nil { // it completed before: its outcome stays
		t.Fatalf("Test of a completed handle: %v, %v", ok, err)
	}
	must(t, done.Close())
	expectStatus(t, "closed handle", done.Wait(context.Background()), comm.ErrInvalidUsage)
	must(t, group.Close()) // again: nothing
}

func TestAWaitCancelledLeavesTheOperationRunning(t *testing.T) {
	left, right := neighbours()
	got := make([]int64, 1)
	h, err := comm.RecvAsync(world, got, left, 20)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := h.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past its context: %v", err)
	}
	if done, err := h.Test(); done || err != nil {
		t.Fatalf("Test: %v, %v", done, err)
	}
	must(t, world.Barrier()) // every rank has seen its wait end: now send
	must(t, comm.Send(world, []int64{int64(rank + 40)}, right, 20))
	must(t, h.Wait(context.Background()))
	if got[0] != int64(left+40) {
		t.Fatalf("got %d", got[0])
	}
}

func TestAnOperationPastItsDeadlineTimesOut(t *testing.T) {
	group, err := world.Split(0, rank, "")
	must(t, err)
	must(t, group.SetTimeout(300*time.Millisecond))
	_, right := neighbours()
	start := time.Now()
	err = comm.Recv(group, make([]int8, 1), right, 21)
	expectStatus(t, "recv nobody sends", err, comm.ErrTimeout)
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the timeout took %v", took)
	}
	must(t, group.Close())
	must(t, world.Barrier())
}

func TestAbortFromAnotherGoroutine(t *testing.T) {
	group, err := world.Split(0, rank, "")
	must(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(200 * time.Millisecond)
		if err := group.Abort(); err != nil {
			t.Error(err)
		}
	}()
	_, right := neighbours()
	expectStatus(t, "aborted recv", comm.Recv(group, make([]int8, 1), right, 22), comm.ErrAborted)
	expectStatus(t, "barrier after abort", group.Barrier(), comm.ErrAborted)
	wg.Wait()
	must(t, group.Close())
	must(t, world.Barrier())
}

func TestRevokeReachesEveryRank(t *testing.T) {
	group, err := world.Split(0, rank, "")
	must(t, err)
	expected := fmt.Sprintf("revoked by rank %d", size-1)
	if rank == size-1 {
		must(t, group.Revoke())
		expected = "revoked on this rank"
	}
	err = group.Barrier()
	expectStatus(t, "barrier of a revoked group", err, comm.ErrRevoked)
	if err != nil && !strings.Contains(err.Error(), expected) {
		t.Errorf("barrier of a revoked group: %q does not say %q", err, expected)
	}
	expectStatus(t, "a later barrier", group.Barrier(), comm.ErrRevoked)
	must(t, group.Close())
	must(t, world.Barrier())
}

func TestAgreeOnARevokedGroupFailsAndShrinkStillWorks(t *testing.T) {
	group, err := world.Split(0, rank, "to-revoke")
	must(t, err)
	must(t, group.Barrier()) // every rank has the group before any revokes it
	must(t, group.Revoke())
	flags, failed, err := group.Agree(1)
	expectStatus(t, "agree on a revoked group", err, comm.ErrRevoked)
	if !strings.Contains(err.Error(), "comm_agree") || flags != 0 || failed != nil {
		t.Fatalf("agree on a revoked group: %d, %v, %q", flags, failed, err)
	}
	shrunk, err := group.Shrink("")
	must(t, err)
	if shrunk.Name() != "to-revoke-shrunk" || shrunk.Size() != size || shrunk.Rank() != rank {
		t.Fatalf("shrunk: %v", shrunk)
	}
	must(t, group.Close()) // the shrunk communicator is the world's, not the revoked group's
	sum := []int64{int64(rank + 1)}
	must(t, comm.AllReduce(shrunk, sum, sum, comm.Sum))
	if want := int64(size * (size + 1) / 2); sum[0] != want {
		t.Fatalf("sum %d, want %d", sum[0], want)
	}
	if flags, _, err := shrunk.Agree(1); err != nil || flags != 1 {
		t.Fatalf("agree on the shrunk communicator: %d, %v", flags, err)
	}
	must(t, shrunk.Close())
	must(t, world.Barrier())
}

func TestRanksThatDisagreeGetAMismatch(t *testing.T) {
	in, out := filled[float32](rank, 4, 0), make([]float32, 4)
	op := comm.Sum
	if rank == size-1 {
		op = comm.Max
	}
	named := []int32{0}
	if err := comm.AllReduce(world, in, out, op); err != nil {
		expectStatus(t, "mismatch", err, comm.ErrMismatch)
		named[0] = 1
	}
	must(t, comm.AllReduce(world, named, named, comm.Max))
	if named[0] != 1 {
		t.Fatal("no rank reported the mismatch")
	}
	ones := []int32{1}
	must(t, comm.AllReduce(world, ones, ones, comm.Sum))
	if ones[0] != int32(size) {
		t.Fatalf("the world no longer sums: %d", ones[0])
	}
}

func TestErrorsCompareByStatus(t *testing.T) {
	err := error(&comm.Error{Status: comm.StatusTimeout, Message: "comm_handle_wait: it took too long"})
	if !errors.Is(err, comm.ErrTimeout) || errors.Is(err, comm.ErrRemote) || err.Error() != "comm_handle_wait: it took too long" {
		t.Fatal("errors.Is or Error() misbehave")
	}
	if comm.ErrMismatch.Error() == "" || comm.StatusAborted.String() == "" {
		t.Fatal("sentinels need words")
	}
}

// Device memory, as a CUDA library hands it out, reaches the C library
// marked with its device, whole or re-sliced: where comm has no CUDA (or
// the machine no GPU) the call that uses it fails naming
// comm_tensor_set_memory and that cause; with one, a pointer that is not
// device memory is refused by the collective itself. Go never touches the
// memory.
func TestDeviceSlices(t *testing.T) {
	if built, ok := os.LookupEnv("COMM_TEST_BUILT_WITH_CUDA"); ok && comm.HasCUDA() != (built == "1") {
		t.Fatalf("HasCUDA() = %v, but the build was configured with COMM_TEST_BUILT_WITH_CUDA=%s", comm.HasCUDA(), built)
	}
	devices, reason := comm.CUDADevices()
	if (devices == 0) != (reason != "") {
		t.Fatalf("CUDADevices() = %d, %q: a reason goes with no device, and only then", devices, reason)
	}
	call, cause := "comm_all_reduce:", "" // a pointer that is no device memory
	if devices == 0 {
		call, cause = "comm_tensor_set_memory:", "no CUDA device visible"
		if !comm.HasCUDA() {
			cause = "needs a build of comm with CUDA"
		}
	}
	bad := map[string]func() ([]float32, error){
		"null pointer":    func() ([]float32, error) { return comm.DeviceSlice[float32](0, 4, 0) },
		"no elements":     func() ([]float32, error) { return comm.DeviceSlice[float32](4096, 0, 0) },
		"negative device": func() ([]float32, error) { return comm.DeviceSlice[float32](4096, 4, -1) },
		"past the end":    func() ([]float32, error) { return comm.DeviceSlice[float32](^uintptr(0)-7, 4, 0) },
	}
	for name, slice := range bad {
		_, err := slice()
		expectStatus(t, name, err, comm.ErrInvalidArgument)
	}
	device, err := comm.DeviceSlice[float32](4096, 4, 0)
	must(t, err)
	defer comm.ReleaseDeviceSlice(device)
	_, err = comm.DeviceSlice[float32](4096+8, 4, 0)
	expectStatus(t, "overlapping", err, comm.ErrInvalidArgument)
	for name, s := range map[string][]float32{"whole": device, "re-sliced": device[1:]} {
		err := comm.AllReduce(world, s, s, comm.Sum)
		var e *comm.Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.Message, call) || !strings.Contains(e.Message, cause) {
			t.Fatalf("%s device slice: got %v, want a refusal by %s saying %q", name, err, call, cause)
		}
	}
	host := []float32{1}
	must(t, comm.AllReduce(world, host, host, comm.Sum))
	if host[0] != float32(size) {
		t.Fatalf("host all_reduce beside a device slice: %v, want %d", host[0], size)
	}
	must(t, world.Barrier())
}

// Rank 0 comes late to a group of every rank: the others cannot finish
// making it before, so a second making from the world fails meanwhile, and
// they abort theirs. Rank 0 then joins, blocking: that needs the others'
// abandoned makings, which go on in the background.
func TestAbortOfAMakingThatWaitsForALateRank(t *testing.T) {
	if size < 2 {
		t.Skip("needs a late rank")
	}
	all := make([]int, size)
	for i := range all {
		all[i] = i
	}
	if rank != 0 {
		making, err := world.GroupAsync(all, "late")
		must(t, err)
		if done, err := making.Test(); done || err != nil {
			t.Fatalf("Test while rank 0 sleeps = %v, %v", done, err)
		}
		_, err = world.SplitAsync(0, 0, "")
		expectStatus(t, "a second making", err, comm.ErrInvalidUsage)
		if !strings.Contains(err.Error(), "another communicator is being made") {
			t.Fatalf("second making: %v", err)
		}
		must(t, making.Abort())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		group, err := making.Wait(ctx)
		expectStatus(t, "Wait after Abort", err, comm.ErrAborted)
		if group != nil || !strings.Contains(err.Error(), "aborted while it was being made") {
			t.Fatalf("Wait after Abort: %v, %v", group, err)
		}
		if _, again := making.Wait(ctx); again != err {
			t.Fatalf("second Wait: %v, want %v", again, err)
		}
		must(t, making.Close())
	} else {
		time.Sleep(300 * time.Millisecond)
		group, err := world.Group(all, "late")
		must(t, err)
		must(t, group.Close())
	}
	if got, want := sumOfWorldRanks(t, world), int64(size*(size-1)/2); got != want {
		t.Fatalf("world sum %d, want %d", got, want)
	}
}
